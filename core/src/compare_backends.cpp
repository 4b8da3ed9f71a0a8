// One GPU through several backends: the cross-backend comparison of two runs and the parity
// table of several (gpudissect compare A B, compare --parity A B C).
#include "gpudissect/compare_backends.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "compute/compute.hpp"
#include "gpudissect/compare_internal.hpp"

namespace gd {

using namespace compare_detail;

std::string to_string(GpuMatch m) {
  switch (m) {
    case GpuMatch::uuid:
      return "uuid";
    case GpuMatch::name:
      return "name";
    case GpuMatch::none:
      break;
  }
  return "none";
}

std::string to_string(BackendVerdict v) {
  switch (v) {
    case BackendVerdict::within:
      return "within";
    case BackendVerdict::differs:
      return "differs";
    case BackendVerdict::not_comparable:
      return "not_comparable";
    case BackendVerdict::only_first:
      return "only_first";
    case BackendVerdict::only_second:
      return "only_second";
  }
  return "within";
}

std::string device_uuid(const CompareInput& in) {
  if (in.reference || !in.run) return "";
  const auto& extra = in.run->device.extra;
  auto it = extra.find("uuid");
  if (it == extra.end()) return "";
  std::string s = it->second;
  if (starts_with(s, "GPU-") || starts_with(s, "MIG-")) s = s.substr(4);
  std::string hex;
  for (char c : s) {
    if (c == '-') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
    hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return hex.size() == 32 ? hex : "";
}

namespace {

std::string trimmed_lower(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return lower(s.substr(b, e - b + 1));
}

}  // namespace

GpuMatch same_gpu(const CompareInput& a, const CompareInput& b) {
  if (a.reference || b.reference) return GpuMatch::none;
  const std::string ua = device_uuid(a), ub = device_uuid(b);
  if (!ua.empty() && ua == ub) return GpuMatch::uuid;
  const std::string na = trimmed_lower(a.name), nb = trimmed_lower(b.name);
  if (!na.empty() && na == nb) return GpuMatch::name;
  return GpuMatch::none;
}

bool cross_backend_inputs(const CompareInput& a, const CompareInput& b) {
  return !a.reference && !b.reference && !a.backend.empty() && !b.backend.empty() &&
         a.backend != b.backend && same_gpu(a, b) != GpuMatch::none;
}

std::string probe_of(const std::string& id) { return id.substr(0, id.find('.')); }

namespace {

// One entry a line: a backend that records a whole listing (ISA text) in one field.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) out.push_back(line);
    start = end + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> instruction_listing(const CompareInput& in, const Figure& f) {
  if (in.run && starts_with(f.id, "compute.")) {
    if (const auto* c = in.run->get<ComputeProbeResult>()) {
      std::string op = f.id.substr(8);
      const bool latency = ends_with(op, ".latency");
      if (latency) op.resize(op.size() - 8);
      for (const ComputeFigure& row : c->table) {
        if (row.op != op) continue;
        if (latency && !row.latency_opcodes.empty()) return row.latency_opcodes;
        if (!row.opcodes.empty()) return row.opcodes;
        if (!row.instruction.empty()) return lines_of(row.instruction);
        break;
      }
    }
  }
  return lines_of(f.instruction);
}

namespace {

// A figure's number and unit: its median, else the per-clock figure a reference states.
struct Number {
  double v = 0;
  std::string unit;
};
std::optional<Number> number_of(const Figure* f) {
  if (!f || !f->status.ok()) return std::nullopt;
  if (f->value && std::isfinite(f->value->median)) return Number{f->value->median, f->unit};
  if (f->per_sm_per_clk && std::isfinite(*f->per_sm_per_clk))
    return Number{*f->per_sm_per_clk, f->per_sm_per_clk_unit};
  return std::nullopt;
}

bool is_ok(const Figure* f) { return f && f->status.ok(); }

// A compute rate's per-SM-per-clock values where the two runs measured it at SM clocks
// further apart than the tolerance: an instruction's rate is a count per clock, and the
// clock a run held is a condition of that run (a GPU slowed by power or its clock governor),
// not something the backend did. Each figure's clock is in its JSON; the note names both.
std::optional<std::pair<Number, Number>> per_clock_pair(const Figure& fa, const Figure& fb,
                                                        double tolerance) {
  if (probe_of(fa.id) != "compute" || !fa.per_sm_per_clk || !fb.per_sm_per_clk || !fa.clock_mhz ||
      !fb.clock_mhz || fa.per_sm_per_clk_unit != fb.per_sm_per_clk_unit)
    return std::nullopt;
  const double ca = *fa.clock_mhz, cb = *fb.clock_mhz;
  if (!(ca > 0) || !(cb > 0) || !std::isfinite(*fa.per_sm_per_clk) ||
      !std::isfinite(*fb.per_sm_per_clk) || std::fabs(cb / ca - 1) <= tolerance)
    return std::nullopt;
  return std::make_pair(Number{*fa.per_sm_per_clk, fa.per_sm_per_clk_unit},
                        Number{*fb.per_sm_per_clk, fb.per_sm_per_clk_unit});
}

// Two ok figures of one id against each other.
void judge(BackendItem& item, const Figure& fa, const Figure& fb, double tolerance) {
  auto na = number_of(&fa), nb = number_of(&fb);
  std::string clock_note;
  if (const auto pc = per_clock_pair(fa, fb, tolerance)) {
    na = pc->first;
    nb = pc->second;
    clock_note = "per clock: [1] at " + fmt(*fa.clock_mhz, 0) + " MHz, [2] at " +
                 fmt(*fb.clock_mhz, 0) + " MHz";
  }
  if (!na || !nb) {
    item.verdict = BackendVerdict::not_comparable;
    item.note = "no value on the " + std::string(!na ? "first" : "second") + " side";
    return;
  }
  item.unit = na->unit;
  item.a = na->v;
  const auto vb = convert_unit(nb->v, nb->unit, na->unit);
  if (!vb) {
    item.b = nb->v;
    item.verdict = BackendVerdict::not_comparable;
    item.note = "units differ (" + na->unit + " against " + nb->unit + ")";
    return;
  }
  item.b = *vb;
  if (na->v != 0) item.ratio = *vb / na->v;
  const bool within = item.ratio ? std::fabs(*item.ratio - 1) <= tolerance + 1e-12 : *vb == 0;
  item.verdict = within ? BackendVerdict::within : BackendVerdict::differs;
  const double step =
      fa.resolution && std::isfinite(*fa.resolution) && *fa.resolution > 0 ? *fa.resolution : 0;
  if (!within && item.ratio && std::fabs(*item.ratio - 1) <= step + 1e-12) {
    item.inside_step = true;
    item.note = "inside [1]'s own step (" + fmt(100 * step, 1) + " %)";
  }
  if (!clock_note.empty()) item.note = clock_note + (item.note.empty() ? "" : "; " + item.note);
}

Status absent_status() {
  Status s;
  s.code = StatusCode::absent;  // the run has no figure with this id
  return s;
}

BackendItem make_item(const std::string& id, const Figure* fa, const Figure* fb,
                      const CompareInput& a, const CompareInput& b, double tolerance) {
  BackendItem item;
  item.id = id;
  const Figure* named = is_ok(fa) ? fa : fb;
  item.label = named->label;
  item.unit = named->unit;
  item.status_a = fa ? fa->status : absent_status();
  item.status_b = fb ? fb->status : absent_status();
  if (fa) item.listing_a = instruction_listing(a, *fa);
  if (fb) item.listing_b = instruction_listing(b, *fb);
  if (is_ok(fa) && is_ok(fb)) {
    judge(item, *fa, *fb, tolerance);
  } else {
    item.verdict = is_ok(fa) ? BackendVerdict::only_first : BackendVerdict::only_second;
    if (const auto n = number_of(named)) (is_ok(fa) ? item.a : item.b) = n->v;
  }
  return item;
}

// Each input's figures by id (the first of a repeated id counts).
std::map<std::string, const Figure*> by_id(const CompareInput& in) {
  std::map<std::string, const Figure*> m;
  for (const Figure& f : in.figures) m.emplace(f.id, &f);
  return m;
}

const Figure* lookup(const std::map<std::string, const Figure*>& m, const std::string& id) {
  auto it = m.find(id);
  return it == m.end() ? nullptr : it->second;
}

// One quantity under two path names. CUDA's texture path (tex1Dfetch from a texture object
// over a linear buffer) and OpenCL's and Vulkan's image path (read_imageui from an
// image1d_buffer_t; texelFetch from a uniform texel buffer) are the same fetch through the
// texture units of a 1D buffer (TLD on NVIDIA: the Vulkan image path's L1 reads CUDA's
// texture L1 latency to the cycle). The memory probe already calls Vulkan's "texture".
struct PathAlias {
  const char* first;
  const char* second;
  const char* why;  // said in the paired item's note
};
constexpr PathAlias kPathAliases[] = {
    {"latency.texture.", "latency.image.", "the same texture-unit fetch"}};

// The figure that stands for `id` in the other run (`other`), where that run lacks `id`
// itself, has the aliased path's id, and this run (`same`) lacks that one.
struct Counterpart {
  std::string id;
  const char* why = nullptr;
};
std::optional<Counterpart> counterpart(const std::string& id,
                                       const std::map<std::string, const Figure*>& same,
                                       const std::map<std::string, const Figure*>& other) {
  if (other.count(id)) return std::nullopt;
  for (const PathAlias& p : kPathAliases)
    for (const auto& [from, to] : {std::pair{p.first, p.second}, std::pair{p.second, p.first}}) {
      const std::string prefix = from;
      if (id.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string alias = to + id.substr(prefix.size());
      if (other.count(alias) && !same.count(alias)) return Counterpart{alias, p.why};
    }
  return std::nullopt;
}

}  // namespace

int CrossBackendReport::count(BackendVerdict v) const {
  int n = 0;
  for (const BackendItem& it : items) n += it.verdict == v;
  return n;
}

int CrossBackendReport::common() const {
  return count(BackendVerdict::within) + count(BackendVerdict::differs) +
         count(BackendVerdict::not_comparable);
}

int CrossBackendReport::inside_step() const {
  return static_cast<int>(std::count_if(items.begin(), items.end(),
                                        [](const BackendItem& it) { return it.inside_step; }));
}

CrossBackendReport compare_backends(const CompareInput& a, const CompareInput& b,
                                    double tolerance) {
  CrossBackendReport r;
  r.a = a;
  r.b = b;
  r.match = same_gpu(a, b);
  r.tolerance = tolerance;
  const auto ma = by_id(a), mb = by_id(b);
  std::set<std::string> done, done_b;  // ids of a (or of both), ids of b paired by alias
  for (const CompareInput* in : {&a, &b}) {
    for (const Figure& f : in->figures) {
      if (in == &b && done_b.count(f.id)) continue;
      if (!done.insert(f.id).second) continue;
      const Figure* fa = lookup(ma, f.id);
      const Figure* fb = lookup(mb, f.id);
      std::optional<Counterpart> alias;
      if (in == &a) alias = counterpart(f.id, ma, mb);
      if (alias) {
        fb = lookup(mb, alias->id);
        done_b.insert(alias->id);
      }
      if (!is_ok(fa) && !is_ok(fb)) continue;
      r.items.push_back(make_item(f.id, fa, fb, a, b, tolerance));
      if (alias) {
        BackendItem& it = r.items.back();
        const std::string as = "[2] as " + alias->id + " (" + alias->why + ")";
        it.note = it.note.empty() ? as : as + "; " + it.note;
      }
    }
  }
  return r;
}

// ---------------------------------------------------------------------------------------
// parity

ParityTable backend_parity(std::vector<CompareInput> inputs, double tolerance) {
  ParityTable t;
  t.inputs = std::move(inputs);  // told apart by their place ([2]), not by a label
  t.tolerance = tolerance;
  const std::size_t n = t.inputs.size();
  std::vector<std::string> order;
  std::map<std::string, ParityRow> rows;
  auto row_of = [&](const std::string& probe) -> ParityRow& {
    auto [it, fresh] = rows.try_emplace(probe);
    if (fresh) {
      order.push_back(probe);
      it->second.probe = probe;
      it->second.cells.assign(n, ParityCell{});
      for (std::size_t i = 1; i < n; ++i)
        it->second.cells[i].common = it->second.cells[i].agree = it->second.cells[i].inside_step =
            0;
    }
    return it->second;
  };
  for (std::size_t i = 0; i < n; ++i) {
    std::set<std::string> seen;
    for (const Figure& f : t.inputs[i].figures) {
      ParityRow& row = row_of(probe_of(f.id));  // every probe a run has gets a row
      if (seen.insert(f.id).second && f.status.ok()) ++row.cells[i].ok;
    }
  }
  for (std::size_t i = 1; i < n; ++i) {
    const CrossBackendReport x = compare_backends(t.inputs[0], t.inputs[i], tolerance);
    for (const BackendItem& it : x.items) {
      if (it.verdict == BackendVerdict::only_first || it.verdict == BackendVerdict::only_second)
        continue;
      ParityCell& cell = rows.at(probe_of(it.id)).cells[i];
      ++*cell.common;
      *cell.agree += it.verdict == BackendVerdict::within;
      *cell.inside_step += it.inside_step;
    }
    if (same_gpu(t.inputs[0], t.inputs[i]) == GpuMatch::none) {
      std::string note = "[";  // appended piece by piece: GCC 12 misreads "[" + to_string()
      note += std::to_string(i + 1);
      note += "] " + t.inputs[i].name + " is not the GPU of [1] " + t.inputs[0].name +
              " (neither UUID nor device name match): its differences are not the backends' "
              "alone";
      t.notes.push_back(note);
    }
  }
  t.total.probe = "all";
  t.total.cells.assign(n, ParityCell{});
  for (std::size_t i = 1; i < n; ++i)
    t.total.cells[i].common = t.total.cells[i].agree = t.total.cells[i].inside_step = 0;
  for (const std::string& p : order) {
    t.rows.push_back(rows.at(p));
    for (std::size_t i = 0; i < n; ++i) {
      const ParityCell& c = t.rows.back().cells[i];
      t.total.cells[i].ok += c.ok;
      if (i == 0) continue;
      *t.total.cells[i].common += c.common.value_or(0);
      *t.total.cells[i].agree += c.agree.value_or(0);
      *t.total.cells[i].inside_step += c.inside_step.value_or(0);
    }
  }
  return t;
}

}  // namespace gd
