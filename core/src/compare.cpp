// Comparing GPUs: inputs, normalisation per SM and per clock, and matching figures across
// inputs. The reference database, the baseline gate and the curves are compare_*.cpp.
#include "gpudissect/compare.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "bandwidth/bandwidth.hpp"
#include "compute/compute.hpp"
#include "gpudissect/compare_internal.hpp"

namespace gd {

namespace fs = std::filesystem;
using namespace compare_detail;

// ---------------------------------------------------------------------------------------
// inputs

CompareInput input_from_result(RunResult r, const std::string& origin) {
  CompareInput in;
  in.name = r.device.name.empty() ? fs::path(origin).stem().string() : r.device.name;
  in.label = in.name;
  in.origin = origin;
  in.backend = r.device.backend;
  in.units = r.device.compute_units;
  in.unit_name = r.device.backend == "cuda" ? "SM" : "CU";
  if (const auto* lat = r.get<LatencyProbeResult>(); lat && lat->clock_mhz_measured) {
    in.clock_mhz = lat->clock_mhz_measured;
    in.clock_source = "measured";
  } else if (const auto* c = r.get<ComputeProbeResult>();
             c && c->clock_mhz && c->clock_source == "measured") {
    in.clock_mhz = c->clock_mhz;
    in.clock_source = "measured";
  } else if (const auto* b = r.get<BandwidthProbeResult>(); b && b->clock_mhz_measured) {
    in.clock_mhz = b->clock_mhz_measured;
    in.clock_source = "measured";
  } else if (r.device.clock_mhz_reported) {
    in.clock_mhz = r.device.clock_mhz_reported;
    in.clock_source = "reported";
  }
  in.figures = r.figures;
  in.run = std::make_shared<const RunResult>(std::move(r));
  return in;
}

CompareInput input_from_reference(const ReferenceGpu& g) {
  CompareInput in;
  in.name = g.name;
  in.label = g.name;
  in.origin = g.file.string();
  in.reference = true;
  in.backend = "reference";
  in.units = g.compute_units;
  in.unit_name = g.unit_name;
  in.clock_mhz = g.clock_mhz;
  if (g.clock_mhz) in.clock_source = "stated";
  std::map<std::string, std::string> titles;
  for (const auto& s : g.sources) titles[s.key] = s.title + " (" + s.document + ")";
  for (const ReferenceFigure& rf : g.figures) {
    Figure f;
    f.id = rf.id;
    f.label = rf.label.empty() ? rf.id : rf.label;
    if (per_clock_unit_name(rf.unit)) {
      f.per_sm_per_clk = rf.value;
      f.per_sm_per_clk_unit = rf.unit;
      f.unit = rf.unit;
    } else {
      f.value = single_value(rf.value);
      f.unit = rf.unit;
      if (rf.per_sm_per_clk) {
        f.per_sm_per_clk = rf.per_sm_per_clk;
        f.per_sm_per_clk_unit = rf.per_sm_per_clk_unit;
      }
    }
    f.higher_is_better = !(rf.unit == "ns" || rf.unit == "us" || rf.unit == "cycles");
    f.clock_mhz = g.clock_mhz;
    f.where = rf.method;
    in.figures.push_back(std::move(f));
    if (!rf.qualifier.empty()) in.qualifiers[rf.id] = rf.qualifier;
    in.notes[rf.id] = rf.method + " Source: " + titles[rf.source] + ".";
  }
  return in;
}

void label_inputs(std::vector<CompareInput>& inputs) {
  std::map<std::string, int> seen;
  for (CompareInput& in : inputs) {
    const int n = ++seen[in.name];
    in.label = n == 1 ? in.name : in.name + " #" + std::to_string(n);
  }
}

std::string input_facts(const CompareInput& in) {
  std::string s = in.reference ? "reference" : in.backend;
  s += ", ";
  s += in.units > 0 ? std::to_string(in.units) + " " + in.unit_name + (in.units == 1 ? "" : "s")
                    : in.unit_name + " count unknown";
  s += ", ";
  s += in.clock_mhz ? fmt(*in.clock_mhz, 0) + " MHz (" + in.clock_source + ")" : "clock unknown";
  return s;
}

// ---------------------------------------------------------------------------------------
// normalisation

std::optional<std::string> per_clock_unit(const std::string& unit) {
  double f = 0;
  const Dim* d = dim_of(unit, &f);
  if (!d) return std::nullopt;
  const std::string canon = d->units.front().first;
  if (canon == "GB/s") return std::string("B/clk/SM");
  if (canon == "TFLOP/s") return std::string("FLOP/clk/SM");
  if (canon == "TOP/s") return std::string("OP/clk/SM");
  if (canon == "Tinst/s") return std::string("ops/clk/SM");
  if (canon == "ns") return std::string("cycles");
  return std::nullopt;
}

std::optional<double> per_sm_per_clock(double value, const std::string& unit, int units,
                                       std::optional<double> clock_mhz) {
  double f = 0;
  const Dim* d = dim_of(unit, &f);
  if (!d || !clock_mhz || *clock_mhz <= 0 || !std::isfinite(value)) return std::nullopt;
  const std::string canon = d->units.front().first;
  const double hz = *clock_mhz * 1e6;
  if (canon == "ns") return value * f * 1e-9 * hz;  // a latency in cycles
  if (units <= 0) return std::nullopt;
  double per_s = 0;  // bytes or operations per second
  if (canon == "GB/s")
    per_s = value * f * 1e9;
  else if (canon == "TFLOP/s" || canon == "TOP/s" || canon == "Tinst/s")
    per_s = value * f * 1e12;
  else
    return std::nullopt;
  return per_s / (units * hz);
}

std::optional<double> per_sm(double value, const std::string& unit, int units) {
  double f = 0;
  const Dim* d = dim_of(unit, &f);
  if (!d || units <= 0) return std::nullopt;
  const std::string canon = d->units.front().first;
  if (canon != "GB/s" && canon != "TFLOP/s" && canon != "TOP/s" && canon != "Tinst/s")
    return std::nullopt;
  return value * f / units;
}

std::optional<std::string> per_sm_unit(const std::string& unit) {
  double f = 0;
  const Dim* d = dim_of(unit, &f);
  if (!d) return std::nullopt;
  const std::string canon = d->units.front().first;
  if (canon == "GB/s") return std::string("GB/s/SM");
  if (canon == "TFLOP/s") return std::string("TFLOP/s/SM");
  if (canon == "TOP/s") return std::string("TOP/s/SM");
  if (canon == "Tinst/s") return std::string("Tinst/s/SM");
  return std::nullopt;
}

std::optional<double> convert_unit(double value, const std::string& from, const std::string& to) {
  if (from == to) return value;
  double ff = 0, ft = 0;
  const Dim* a = dim_of(from, &ff);
  const Dim* b = dim_of(to, &ft);
  if (!a || a != b) return std::nullopt;
  return value * ff / ft;
}

// ---------------------------------------------------------------------------------------
// the comparison

namespace {

bool has_number(const Figure& f) { return f.status.ok() && (f.value || f.per_sm_per_clk); }

// Ids in first-seen order, and the figure each input has under them (null: none).
struct FigureIndex {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Figure*>> by_id;
};

FigureIndex index_figures(const std::vector<CompareInput>& inputs) {
  FigureIndex x;
  const std::size_t n = inputs.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (const Figure& f : inputs[i].figures) {
      auto& v = x.by_id[f.id];
      if (v.empty()) {
        v.assign(n, nullptr);
        x.order.push_back(f.id);
      }
      if (!v[i]) v[i] = &f;  // a repeated id within one input: the first counts
    }
  }
  return x;
}

// The row's unit: the first input's with a value; its label and direction likewise.
void row_heading(CompareRow& row, const std::vector<const Figure*>& figs) {
  for (const Figure* f : figs) {
    if (!f) continue;
    if (row.label.empty()) {
      row.label = f->label;
      row.higher_is_better = f->higher_is_better;
    }
    if (row.unit.empty() && f->value) {
      row.unit = f->unit;
      row.label = f->label;
      row.higher_is_better = f->higher_is_better;
    }
  }
  if (row.unit.empty())
    for (const Figure* f : figs)
      if (f && !f->unit.empty()) {
        row.unit = f->unit;
        break;
      }
  row.per_sm_unit = per_sm_unit(row.unit).value_or("");
}

// One input's cell of a row: the value in the row's unit, per SM and per SM per clock.
CompareCell make_cell(const Figure* f, const CompareInput& in, const CompareRow& row) {
  CompareCell cell;
  if (!f) return cell;
  cell.present = true;
  cell.status = f->status;
  cell.instruction = f->instruction;
  cell.where = f->where;
  if (auto q = in.qualifiers.find(row.id); q != in.qualifiers.end()) cell.qualifier = q->second;
  if (auto nt = in.notes.find(row.id); nt != in.notes.end()) cell.note = nt->second;
  if (!f->status.ok()) return cell;
  if (f->value) {
    if (auto v = convert_unit(f->value->median, f->unit, row.unit)) {
      cell.value = v;
    } else {
      cell.unit_mismatch = true;
      cell.unit = f->unit;
    }
  }
  const std::optional<double> clk = f->clock_mhz ? f->clock_mhz : in.clock_mhz;
  if (f->per_sm_per_clk) {
    cell.per_clk = f->per_sm_per_clk;
    cell.per_clk_unit = f->per_sm_per_clk_unit;
  } else if (f->value && !cell.unit_mismatch) {
    if (auto u = per_clock_unit(row.unit)) {
      if (auto p = per_sm_per_clock(*cell.value, row.unit, in.units, clk)) {
        cell.per_clk = p;
        cell.per_clk_unit = *u;
        cell.per_clk_derived = true;
      }
    }
  }
  if (cell.value) cell.per_sm = per_sm(*cell.value, row.unit, in.units);
  return cell;
}

// Per-clock figures in one unit. A tool states an instruction's rate per SM per clock in its
// own unit (the compute probe: thread-instructions, ops/clk/SM), while one derived from a
// rate in TFLOP/s is in FLOP/clk/SM. The first input that has both fixes the factor between
// them (2 FLOP per FMA, ~4096 per wgmma thread-instruction ...), and the derived figures of
// the others are expressed in the stated unit with it.
void one_per_clock_unit(CompareRow& row, const std::vector<const Figure*>& figs,
                        const std::vector<CompareInput>& inputs) {
  std::string stated;
  for (const CompareCell& cell : row.cells)
    if (cell.per_clk && !cell.per_clk_derived) {
      stated = cell.per_clk_unit;
      break;
    }
  const auto derived_unit = per_clock_unit(row.unit);
  if (stated.empty() || !derived_unit || stated == *derived_unit) return;
  std::optional<double> k;
  for (std::size_t i = 0; i < row.cells.size() && !k; ++i) {
    const CompareCell& cell = row.cells[i];
    if (!cell.per_clk || cell.per_clk_derived || cell.per_clk_unit != stated || !cell.value ||
        *cell.per_clk <= 0)
      continue;
    const Figure* f = figs[i];
    const auto clk = f->clock_mhz ? f->clock_mhz : inputs[i].clock_mhz;
    if (auto d = per_sm_per_clock(*cell.value, row.unit, inputs[i].units, clk))
      if (*d > 0) k = *d / *cell.per_clk;
  }
  if (!k) return;
  for (CompareCell& cell : row.cells)
    if (cell.per_clk && cell.per_clk_derived && cell.per_clk_unit == *derived_unit) {
      cell.per_clk = *cell.per_clk / *k;
      cell.per_clk_unit = stated;
    }
}

// Ratios to the first input.
void ratios_to_first(CompareRow& row) {
  const CompareCell& first = row.cells.front();
  for (std::size_t i = 1; i < row.cells.size(); ++i) {
    CompareCell& cell = row.cells[i];
    if (first.value && cell.value && *first.value != 0) cell.ratio = *cell.value / *first.value;
    if (first.per_clk && cell.per_clk && first.per_clk_unit == cell.per_clk_unit &&
        *first.per_clk != 0)
      cell.per_clk_ratio = *cell.per_clk / *first.per_clk;
  }
  if (first.value) row.cells.front().ratio = 1.0;
  if (first.per_clk) row.cells.front().per_clk_ratio = 1.0;
}

// Caveats: what differs between the inputs.
std::vector<std::string> caveats_of(const std::vector<CompareInput>& inputs) {
  std::vector<std::string> out;
  std::set<std::string> backends;
  std::set<int> units;
  double clk_lo = 0, clk_hi = 0;
  bool unknown_clock = false, unknown_units = false;
  for (const CompareInput& in : inputs) {
    backends.insert(in.backend);
    if (in.clock_mhz) {
      clk_lo = clk_lo == 0 ? *in.clock_mhz : std::min(clk_lo, *in.clock_mhz);
      clk_hi = std::max(clk_hi, *in.clock_mhz);
    } else {
      unknown_clock = true;
    }
    if (in.units > 0)
      units.insert(in.units);
    else
      unknown_units = true;
  }
  if (backends.count("cuda") && backends.count("opencl"))
    out.push_back(
        "The inputs come from different backends: an OpenCL run has no cycle counter (its "
        "latencies are in ns only) and may time other instructions than a CUDA run.");
  if (backends.count("reference") && backends.size() > 1)
    out.push_back(
        "Reference figures were measured by other software with other methods (each names its "
        "source and method): a ratio to them says how the figures compare, not that the "
        "hardware differs by it.");
  if (clk_lo > 0 && clk_hi > 1.02 * clk_lo)
    out.push_back(
        "The inputs ran at different clocks: compare cycles with cycles and ns with ns (each id "
        "has one unit); 'per SM per clock' divides by each input's own clock.");
  if (unknown_clock)
    out.push_back(
        "Some inputs have no known clock: their per-clock figures are absent unless the source "
        "stated them; 'per SM' (GB/s per SM = bytes per ns per SM) still compares them.");
  if (units.size() > 1 || unknown_units)
    out.push_back(
        "The inputs have different numbers of SMs (CUs, WGPs, cores): whole-GPU figures "
        "scale with them; the per-SM columns do not.");
  return out;
}

}  // namespace

Comparison compare(std::vector<CompareInput> inputs) {
  Comparison c;
  label_inputs(inputs);
  c.inputs = std::move(inputs);
  const std::size_t n = c.inputs.size();
  const FigureIndex index = index_figures(c.inputs);
  for (const std::string& id : index.order) {
    const auto& figs = index.by_id.at(id);
    int with_number = 0, present = 0;
    for (const Figure* f : figs) {
      present += f != nullptr;
      with_number += f && has_number(*f);
    }
    if (present < 2) {
      for (std::size_t i = 0; i < n; ++i)
        if (figs[i]) c.only_in[c.inputs[i].label].push_back(id);
      continue;
    }
    CompareRow row;
    row.id = id;
    row.present = with_number;
    row_heading(row, figs);
    for (std::size_t i = 0; i < n; ++i) row.cells.push_back(make_cell(figs[i], c.inputs[i], row));
    one_per_clock_unit(row, figs, c.inputs);
    ratios_to_first(row);
    c.rows.push_back(std::move(row));
  }
  c.caveats = caveats_of(c.inputs);
  return c;
}

}  // namespace gd
