// The opening summary of the run report (article.hpp).
#include "article.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

#include "charts.hpp"
#include "gpudissect/units.hpp"

namespace gd::report::detail {

namespace {

// A figure of the run with a value (status ok); nullptr otherwise.
const Figure* fig(const RunResult& r, const std::string& id) {
  for (const Figure& f : r.figures)
    if (f.id == id && f.status.ok() && f.value) return &f;
  return nullptr;
}

std::string num(double v) {
  const double a = std::fabs(v);
  return format_fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

std::string bytes_text(double b) { return format_bytes(b); }

std::string value_text(double v, const std::string& unit) {
  return unit == "bytes" ? format_bytes(v) : num(v) + " " + unit;
}

std::string capacity(const RunResult& r, const std::string& id) {
  const Figure* f = fig(r, id);
  return f ? bytes_text(f->value->median) : "-";
}

std::string latency(const RunResult& r, const std::string& base) {
  const Figure* c = fig(r, base + ".cycles");
  const Figure* n = fig(r, base);
  if (!c && !n) return "-";
  std::string s;
  if (c) s += num(c->value->median) + " cycles";
  if (n) s += std::string(c ? " · " : "") + num(n->value->median) + " ns";
  return s;
}

std::string tbps(double gbps) {
  return gbps >= 1000 ? format_fixed(gbps / 1000, 1) + " TB/s" : format_fixed(gbps, 0) + " GB/s";
}

std::string bandwidth(const RunResult& r, const std::string& id) {
  const Figure* f = fig(r, id);
  if (!f) return "-";
  std::string s =
      f->unit == "GB/s" ? tbps(f->value->median) : num(f->value->median) + " " + f->unit;
  if (f->per_sm_per_clk) s += " · " + num(*f->per_sm_per_clk) + " " + f->per_sm_per_clk_unit;
  return s;
}

std::string extra(const DeviceInfo& d, const std::string& key) {
  auto it = d.extra.find(key);
  return it == d.extra.end() ? "" : it->second;
}

// One box of the diagram: a title and lines "key value".
struct Box {
  double x, y, w, h;
  std::string title;
  std::vector<std::pair<std::string, std::string>> lines;
  std::string fill;
};

void draw(std::ostringstream& o, const Box& b) {
  o << "<rect x=\"" << b.x << "\" y=\"" << b.y << "\" width=\"" << b.w << "\" height=\"" << b.h
    << "\" rx=\"6\" fill=\"" << b.fill << "\" stroke=\"#345\" stroke-width=\"1.2\"/>\n";
  o << "<text x=\"" << b.x + 10 << "\" y=\"" << b.y + 19
    << "\" font-weight=\"bold\" font-size=\"14\">" << html_escape(b.title) << "</text>\n";
  double y = b.y + 38;
  for (const auto& [k, v] : b.lines) {
    o << "<text x=\"" << b.x + 10 << "\" y=\"" << y << "\" font-size=\"12\"><tspan fill=\"#666\">"
      << html_escape(k) << "</tspan><tspan x=\"" << b.x + 82 << "\">" << html_escape(v)
      << "</tspan></text>\n";
    y += 16;
  }
}

void arrow(std::ostringstream& o, double x1, double y1, double x2, double y2) {
  o << "<line x1=\"" << x1 << "\" y1=\"" << y1 << "\" x2=\"" << x2 << "\" y2=\"" << y2
    << "\" stroke=\"#345\" stroke-width=\"1.5\" marker-end=\"url(#gd-arrow)\"/>\n";
}

// Whether a reference describes the GPU of the run itself ("NVIDIA H200 (peer tools)").
bool same_gpu(const ReferenceGpu& g, const std::string& device) {
  auto low = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string d = low(device);
  if (d.empty()) return false;
  std::string n = low(g.name);
  if (auto p = n.find(" ("); p != std::string::npos) n = n.substr(0, p);
  if (n == d) return true;
  for (const std::string& a : g.aliases)
    if (low(a) == d) return true;
  return false;
}

// The main instruction classes, in the order the summary lists them.
const char* kMainOps[] = {"fp32.fma",   "fp64.fma",   "fp16x2.fma", "bf16x2.fma",
                          "int32.mad",  "int32.dp4a", "sfu.rsqrt",  "mma.bf16",
                          "wgmma.bf16", "wgmma.e4m3", "wgmma.s8"};

}  // namespace

namespace {

constexpr double kSvgW = 960, kSvgH = 330;

// Left: one SM with its registers, shared memory and L1.
void sm_column(std::ostringstream& o, const RunResult& r, const std::string& sm) {
  const DeviceInfo& d = r.device;
  const double H = kSvgH;
  const std::string units = d.compute_units > 0 ? std::to_string(d.compute_units) : "-";
  o << "<rect x=\"4\" y=\"4\" width=\"318\" height=\"" << H - 8
    << "\" rx=\"8\" fill=\"#f7f9fc\" stroke=\"#789\" stroke-dasharray=\"5 3\"/>\n"
    << "<text x=\"14\" y=\"24\" font-size=\"14\" font-weight=\"bold\">One " << sm << " (× " << units
    << ")</text>\n";
  std::string regs = "-";
  if (const std::string n = extra(d, "regs_per_sm"); !n.empty())
    regs = bytes_text(std::stod(n) * 4) + " (" + n + " × 32 bit, reported)";
  draw(o, {14,
           34,
           298,
           76,
           "Registers",
           {{"capacity", regs}, {"latency", "-"}, {"bandwidth", "-"}},
           "#eef3fb"});
  std::string shared = d.shared_per_sm_bytes
                           ? bytes_text(static_cast<double>(*d.shared_per_sm_bytes)) + " (reported)"
                           : "-";
  draw(o, {14,
           120,
           298,
           90,
           "Shared memory",
           {{"capacity", shared},
            {"latency", latency(r, "latency.shared.shared")},
            {"bandwidth", bandwidth(r, "bandwidth.shared.read_128")}},
           "#eef3fb"});
  draw(o, {14,
           220,
           298,
           98,
           "L1",
           {{"capacity", capacity(r, "latency.global.L1.capacity")},
            {"latency", latency(r, "latency.global.L1")},
            {"bandwidth", bandwidth(r, "bandwidth.l1.read")}},
           "#eef3fb"});
}

// Middle: the L2, split into its partitions where the run found them.
void l2_column(std::ostringstream& o, const RunResult& r, const std::string& sm) {
  const DeviceInfo& d = r.device;
  const double H = kSvgH;
  const bool split = fig(r, "latency.global.L2_near") || fig(r, "latency.global.L2_far") ||
                     fig(r, "latency.global.L2_near.cycles") ||
                     fig(r, "latency.global.L2_far.cycles");
  std::string l2cap =
      d.l2_bytes ? bytes_text(static_cast<double>(*d.l2_bytes)) + " (reported)" : "-";
  o << "<rect x=\"352\" y=\"4\" width=\"300\" height=\"" << H - 8
    << "\" rx=\"8\" fill=\"#fbf8f1\" stroke=\"#987\"/>\n"
    << "<text x=\"362\" y=\"24\" font-size=\"14\" font-weight=\"bold\">L2 (shared by all " << sm
    << "s)</text>\n<text x=\"362\" y=\"42\" font-size=\"12\"><tspan fill=\"#666\">"
       "capacity</tspan><tspan x=\"434\">"
    << html_escape(l2cap) << "</tspan></text>\n"
    << "<text x=\"362\" y=\"58\" font-size=\"12\"><tspan fill=\"#666\">bandwidth</tspan><tspan "
       "x=\"434\">"
    << html_escape(bandwidth(r, "bandwidth.l2.read")) << "</tspan></text>\n";
  if (split) {
    draw(o, {362,
             72,
             280,
             90,
             "L2 near partition",
             {{"reach", capacity(r, "latency.global.L2_near.capacity")},
              {"latency", latency(r, "latency.global.L2_near")},
              {"note", "lines in this SM's half"}},
             "#fdf3df"});
    draw(o, {362,
             172,
             280,
             90,
             "L2 far partition",
             {{"reach", capacity(r, "latency.global.L2_far.capacity")},
              {"latency", latency(r, "latency.global.L2_far")},
              {"note", "lines across the crossbar"}},
             "#fdf3df"});
  } else {
    draw(o, {362,
             72,
             280,
             90,
             "L2",
             {{"reach", capacity(r, "latency.global.L2.capacity")},
              {"latency", latency(r, "latency.global.L2")}},
             "#fdf3df"});
  }
  o << "<text x=\"362\" y=\"" << H - 46
    << "\" font-size=\"12\"><tspan fill=\"#666\">best"
       "</tspan><tspan x=\"434\">"
    << html_escape(bandwidth(r, "bandwidth.l2.read_best"))
    << "</tspan></text>\n<text x=\"362\" y=\"" << H - 28
    << "\" font-size=\"11\" fill=\"#666\">best: lines shared by several " << sm << "s</text>\n";
}

// Right: device memory and the host link.
void memory_column(std::ostringstream& o, const RunResult& r) {
  const DeviceInfo& d = r.device;
  std::string mem = d.memory_bytes ? bytes_text(static_cast<double>(*d.memory_bytes)) : "-";
  std::string bus =
      d.memory_bus_width_bits ? std::to_string(*d.memory_bus_width_bits) + " bit" : "-";
  draw(o, {682,
           72,
           274,
           140,
           "Device memory",
           {{"capacity", mem},
            {"bus", bus},
            {"latency", latency(r, "latency.global.device_memory")},
            {"read", bandwidth(r, "bandwidth.dram.read")},
            {"write", bandwidth(r, "bandwidth.dram.write")},
            {"copy", bandwidth(r, "bandwidth.dram.copy")}},
           "#f1f7ef"});
  draw(o, {682,
           222,
           274,
           76,
           "Host link",
           {{"to device", bandwidth(r, "bandwidth.host.h2d_pinned")},
            {"to host", bandwidth(r, "bandwidth.host.d2h_pinned")}},
           "#f4f4f4"});
}

}  // namespace

std::string hierarchy_svg(const RunResult& r) {
  const std::string sm = r.device.backend == "cuda" ? "SM" : "CU";
  std::ostringstream o;
  const double W = kSvgW, H = kSvgH;
  o << "<svg class=\"diagram\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << W << " " << H
    << "\" width=\"" << W << "\" height=\"" << H
    << "\" role=\"img\" font-family=\"system-ui, sans-serif\" fill=\"#222\">\n"
       "<title>Memory hierarchy with measured capacity, latency and bandwidth</title>\n"
       "<defs><marker id=\"gd-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
       "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" "
       "fill=\"#345\"/></marker></defs>\n";
  sm_column(o, r, sm);
  l2_column(o, r, sm);
  memory_column(o, r);
  arrow(o, 312, 269, 352, 269);
  arrow(o, 652, 142, 682, 142);
  arrow(o, 819, 212, 819, 222);
  o << "</svg>\n";
  return o.str();
}

std::vector<Standout> standouts(const RunResult& r, const std::vector<ReferenceGpu>& refs,
                                std::size_t n) {
  const CompareInput self = input_from_result(r, "this run");
  struct Seen {
    double value = 0;
    std::string unit, basis;
    bool higher_is_better = true;
    std::string label;
    std::vector<std::tuple<double, std::string, std::string>> refs;  // value, name, qualifier
  };
  // id -> basis rank (0 per clock, 1 per SM, 2 as stated) -> what was seen
  std::map<std::string, std::map<int, Seen>> seen;
  for (const ReferenceGpu& g : refs) {
    if (same_gpu(g, r.device.name)) continue;
    const Comparison c = compare({self, input_from_reference(g)});
    for (const CompareRow& row : c.rows) {
      if (row.cells.size() != 2) continue;
      const CompareCell& a = row.cells[0];
      const CompareCell& b = row.cells[1];
      if (!a.present || !b.present || !a.status.ok() || !b.status.ok()) continue;
      int rank;
      double va, vb;
      std::string unit;
      if (a.per_clk && b.per_clk && a.per_clk_unit == b.per_clk_unit) {
        rank = 0, va = *a.per_clk, vb = *b.per_clk, unit = a.per_clk_unit;
      } else if (a.per_sm && b.per_sm && !row.per_sm_unit.empty()) {
        rank = 1, va = *a.per_sm, vb = *b.per_sm, unit = row.per_sm_unit;
      } else if (a.value && b.value && !a.unit_mismatch && !b.unit_mismatch) {
        rank = 2, va = *a.value, vb = *b.value, unit = row.unit;
      } else {
        continue;
      }
      if (!(va > 0) || !(vb > 0) || !std::isfinite(va) || !std::isfinite(vb)) continue;
      Seen& s = seen[row.id][rank];
      s.value = va;
      s.unit = unit;
      s.basis = rank == 0 ? "per SM per clock" : rank == 1 ? "per SM" : "as stated";
      s.higher_is_better = row.higher_is_better;
      s.label = row.label;
      s.refs.emplace_back(vb, g.name, b.qualifier);
    }
  }
  std::vector<Standout> out;
  for (const auto& [id, by_rank] : seen) {
    const Seen& s = by_rank.begin()->second;  // the best basis any reference allows
    auto [lo, hi] = std::minmax_element(s.refs.begin(), s.refs.end(), [](auto& x, auto& y) {
      return std::get<0>(x) < std::get<0>(y);
    });
    // A reference stated as "at least" X may lie above any value: nothing is above it for
    // sure; one stated "at most" X, below: nothing is below it for sure.
    bool open_above = false, open_below = false;
    for (const auto& ref : s.refs) {
      open_above |= std::get<2>(ref) == "at least";
      open_below |= std::get<2>(ref) == "at most";
    }
    const auto* nearest = (s.value > std::get<0>(*hi) && !open_above)   ? &*hi
                          : (s.value < std::get<0>(*lo) && !open_below) ? &*lo
                                                                        : nullptr;
    if (!nearest) continue;  // inside the references' range: nothing sets it apart
    Standout st;
    st.id = id;
    st.label = s.label;
    st.basis = s.basis;
    st.unit = s.unit;
    st.value = s.value;
    st.nearest = std::get<0>(*nearest);
    st.against = std::get<1>(*nearest);
    st.qualifier = std::get<2>(*nearest);
    st.references = static_cast<int>(s.refs.size());
    st.ratio = s.value / st.nearest;
    st.better = (st.ratio > 1) == s.higher_is_better;
    out.push_back(std::move(st));
  }
  std::sort(out.begin(), out.end(), [](const Standout& x, const Standout& y) {
    const double dx = std::fabs(std::log(x.ratio)), dy = std::fabs(std::log(y.ratio));
    return dx != dy ? dx > dy : x.id < y.id;
  });
  if (out.size() > n) out.resize(n);
  return out;
}

namespace {

// The main instruction rates: per SM per clock as the run states them, as work per SM per
// clock, and GPU-wide.
void rates_table(std::ostringstream& o, const RunResult& r, const std::string& sm) {
  std::vector<const Figure*> rates;
  for (const char* op : kMainOps)
    if (const Figure* f = fig(r, std::string("compute.") + op); f && f->per_sm_per_clk)
      rates.push_back(f);
  if (rates.size() < 4) {  // another GPU's op names: the first ten it has
    rates.clear();
    for (const Figure& f : r.figures) {
      const bool lat = f.id.size() > 8 && f.id.compare(f.id.size() - 8, 8, ".latency") == 0;
      if (f.id.rfind("compute.", 0) == 0 && !lat && f.status.ok() && f.per_sm_per_clk &&
          rates.size() < 10)
        rates.push_back(&f);
    }
  }
  if (rates.empty()) {
    o << "<p class=\"muted\">- (this run has no compute figures)</p>\n";
  } else {
    // Each rate as the run states it (thread-instructions per SM per clock) and as work per
    // SM per clock (FLOP or OP, from the GPU-wide rate, the SM count and the clock the figure
    // was measured at), with a bar on a log scale for the latter.
    std::vector<std::optional<double>> work(rates.size());
    double top = 0;
    for (std::size_t i = 0; i < rates.size(); ++i) {
      const Figure* f = rates[i];
      work[i] = per_sm_per_clock(f->value->median, f->unit, r.device.compute_units, f->clock_mhz);
      if (work[i]) top = std::max(top, *work[i]);
    }
    o << "<table class=\"rates\">\n<tr><th>instruction</th><th class=\"n\">thread-instr. "
         "/ clk / "
      << sm << "</th><th class=\"n\">FLOP, OP / clk / " << sm
      << "</th><th class=\"n\">whole GPU</th></tr>\n";
    for (std::size_t i = 0; i < rates.size(); ++i) {
      const Figure* f = rates[i];
      const double w = (top > 0 && work[i]) ? 4.0 * std::log1p(*work[i]) / std::log1p(top) : 0;
      o << "<tr><td title=\""
        << html_escape(f->id + (f->instruction.empty() ? "" : ": " + f->instruction)) << "\">"
        << html_escape(f->label) << "</td><td class=\"n\">" << html_escape(num(*f->per_sm_per_clk))
        << "</td><td class=\"n\"><span class=\"bar\" "
        << "style=\"width:" << format_fixed(w, 2) << "em\"></span>"
        << html_escape(work[i] ? format_fixed(*work[i], *work[i] >= 100 ? 0 : 1) : "-")
        << "</td><td class=\"n\">" << html_escape(num(f->value->median) + " " + f->unit)
        << "</td></tr>\n";
    }
    o << "</table>\n<p class=\"muted small\">At the SM clock measured while each ran; bars on a "
         "log scale. Hover a row for its id and the instruction timed.</p>\n";
  }
}

// The figures of the run furthest outside the references' range.
void standouts_list(std::ostringstream& o, const RunResult& r,
                    const std::vector<ReferenceGpu>* refs, const std::string& refs_note,
                    const std::string& sm) {
  if (!refs) {
    o << "<p class=\"muted\">- (" << html_escape(refs_note) << ")</p>\n";
  } else {
    const auto top = standouts(r, *refs);
    if (top.empty()) {
      o << "<p class=\"muted\">- (no figure of this run lies outside the range of the "
           "reference GPUs that state it)</p>\n";
    } else {
      o << "<p class=\"muted small\">The figures of this run furthest outside the range of "
           "the reference GPUs (<code>data/reference</code>, measured by others: see "
           "<code>gpudissect reference list</code>), compared per "
        << sm << " per clock where both sides allow it (else per " << sm
        << ", else as stated), "
           "against the nearest reference.</p>\n<ol "
           "class=\"standouts\">\n";
      for (const Standout& s : top) {
        const std::string mark = s.qualifier == "approx"     ? "~"
                                 : s.qualifier == "at least" ? "&gt;"
                                 : s.qualifier == "at most"  ? "&lt;"
                                                             : "";
        o << "<li><b>" << html_escape(s.label)
          << "</b>: " << html_escape(value_text(s.value, s.unit)) << ", <b>"
          << html_escape(format_fixed(s.ratio, s.ratio >= 10  ? 0
                                               : s.ratio >= 1 ? 1
                                                              : 2))
          << "×</b> " << (s.ratio > 1 ? "the highest" : "the lowest") << " of " << s.references
          << (s.references == 1 ? " reference" : " references") << " (" << html_escape(s.against)
          << ", " << mark << html_escape(value_text(s.nearest, s.unit)) << ")"
          << (s.better ? "" : ", <i>worse</i>") << " <code class=\"id\">" << html_escape(s.id)
          << "</code></li>\n";
      }
      o << "</ol>\n";
    }
  }
}

}  // namespace

std::string article_summary(const RunResult& r, const std::vector<ReferenceGpu>* refs,
                            const std::string& refs_note) {
  std::ostringstream o;
  const std::string sm = r.device.backend == "cuda" ? "SM" : "CU";
  o << "<section class=\"glance\">\n<h2 id=\"glance\" class=\"keep\">At a glance</h2>\n"
       "<figure class=\"chart hierarchy\">\n"
    << hierarchy_svg(r)
    << "<figcaption>The memory hierarchy as measured: capacity where a latency plateau ends "
       "(reported by the driver where marked), load-to-use latency, and the best read "
       "bandwidth, whole GPU and per "
    << sm
    << " per clock. A <code>-</code> is a figure this "
       "run does not have.</figcaption>\n</figure>\n<div class=\"facts\">\n<div>\n"
       "<h3 id=\"rates\">Instruction rates per "
    << sm << " per clock</h3>\n";
  rates_table(o, r, sm);
  o << "</div>\n<div>\n<h3 id=\"standouts\">What sets it apart</h3>\n";
  standouts_list(o, r, refs, refs_note, sm);
  o << "</div>\n</div>\n</section>\n";
  return o.str();
}

std::string table_of_contents(const std::string& html) {
  std::ostringstream o;
  o << "<nav class=\"toc\" id=\"contents\">\n<h2 class=\"keep\">Contents</h2>\n<ol>\n";
  std::size_t pos = 0;
  int n = 0;
  while ((pos = html.find("<h2 id=\"", pos)) != std::string::npos) {
    const std::size_t id0 = pos + 8;
    const std::size_t id1 = html.find('"', id0);
    const std::size_t t0 = html.find('>', id1);
    const std::size_t t1 = html.find("</h2>", t0);
    if (id1 == std::string::npos || t0 == std::string::npos || t1 == std::string::npos) break;
    // The heading's text is already escaped HTML; tags inside it (none today) are dropped.
    std::string text;
    bool tag = false;
    for (std::size_t i = t0 + 1; i < t1; ++i) {
      if (html[i] == '<') tag = true;
      if (!tag) text += html[i];
      if (html[i] == '>') tag = false;
    }
    o << "<li><a href=\"#" << html.substr(id0, id1 - id0) << "\">" << text << "</a></li>\n";
    ++n;
    pos = t1;
  }
  o << "</ol>\n</nav>\n";
  return n ? o.str() : std::string();
}

}  // namespace gd::report::detail
