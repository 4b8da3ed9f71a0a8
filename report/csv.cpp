// CSV files: one per curve, and one with every level.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "charts.hpp"
#include "gpudissect/units.hpp"
#include "output.hpp"
#include "probe_report.hpp"
#include "report.hpp"
#include "sections.hpp"

namespace gd::report {

namespace {

namespace fs = std::filesystem;

std::string num(double v) {
  if (!std::isfinite(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}
std::string num(const std::optional<double>& v) { return v ? num(*v) : std::string(); }
std::string num(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : std::string(); }

class CsvFile {
 public:
  explicit CsvFile(const fs::path& p) : out_(p) {}
  void row(const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i)
      out_ << (i ? "," : "") << detail::csv_field(cells[i]);
    out_ << '\n';
  }
  void close() { out_.commit(); }

 private:
  OutputFile out_;
};

const std::vector<std::string> kPointHeader = {
    "footprint_bytes", "stride_bytes", "status", "cycles_median", "cycles_q1",
    "cycles_q3",       "ns_median",    "ns_q1",  "ns_q3",         "clock_mhz"};

fs::path write_points(const fs::path& file, const CurveResult& c) {
  CsvFile f(file);
  f.row(kPointHeader);
  for (const LatencyPoint& pt : c.points) {
    std::vector<std::string> cells = {std::to_string(pt.footprint_bytes),
                                      std::to_string(pt.stride_bytes), pt.status.name()};
    for (const auto* s : {&pt.cycles, &pt.ns}) {
      if (*s) {
        cells.push_back(num((*s)->median));
        cells.push_back(num((*s)->q1));
        cells.push_back(num((*s)->q3));
      } else {
        cells.insert(cells.end(), 3, std::string());
      }
    }
    cells.push_back(num(pt.clock_mhz));
    f.row(cells);
  }
  f.close();
  return file;
}

void level_rows(CsvFile& f, const std::string& probe, const std::string& curve,
                const CurveResult& c) {
  for (const Level& l : c.levels)
    f.row({probe, curve, l.name, num(l.capacity_bytes), num(l.capacity_lo_bytes),
           num(l.capacity_hi_bytes), num(l.latency_cycles), num(l.latency_ns), num(l.step_cycles),
           num(l.step_ns), num(l.confidence)});
}

}  // namespace

std::vector<fs::path> write_csv(const fs::path& dir, const RunResult& r,
                                const ProbeRegistry& registry) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw std::runtime_error("cannot write " + dir.string() + ": " +
                             (ec ? ec.message() : std::string("not a directory")));
  std::vector<fs::path> written;
  for (const Probe* probe : registry.all())
    if (const ProbeReport* rep = probe_reports().find(probe->name());
        rep && r.probes.count(probe->name()))
      for (const auto& f : rep->write_csv(dir, r)) written.push_back(f);
  if (!r.figures.empty()) written.push_back(write_figures_csv(dir / "figures.csv", r.figures));
  return written;
}

fs::path write_figures_csv(const fs::path& file, const std::vector<Figure>& figures) {
  CsvFile f(file);
  f.row({"id", "label", "status", "value", "q1", "q3", "unit", "per_sm_per_clk",
         "per_sm_per_clk_unit", "clock_mhz", "better", "instruction", "where", "reason"});
  for (const Figure& g : figures)
    f.row({g.id, g.label, g.status.name(), g.value ? num(g.value->median) : "",
           g.value ? num(g.value->q1) : "", g.value ? num(g.value->q3) : "", g.unit,
           num(g.per_sm_per_clk), g.per_sm_per_clk_unit, num(g.clock_mhz),
           g.higher_is_better ? "higher" : "lower", g.instruction, g.where, g.status.reason});
  f.close();
  return file;
}

std::vector<fs::path> write_latency_csv(const fs::path& dir, const RunResult& r) {
  std::vector<fs::path> written;
  const LatencyProbeResult* lat = r.get<LatencyProbeResult>();
  if (!lat) return written;
  const LatencyProbeResult& p = *lat;

  for (const std::string& name : path_order(p))
    written.push_back(write_points(dir / (detail::file_stem("latency_" + slugify(name)) + ".csv"),
                                   p.paths.at(name)));
  for (const std::string& key : detail::tlb_order(p)) {
    const uint64_t stride = detail::tlb_stride(key, p.tlb.at(key));
    const std::string stem = stride ? std::to_string(stride) : slugify(key);
    written.push_back(
        write_points(dir / (detail::file_stem("tlb_" + stem) + ".csv"), p.tlb.at(key)));
  }

  const fs::path levels = dir / "levels.csv";
  CsvFile f(levels);
  f.row({"probe", "curve", "level", "capacity_bytes", "capacity_lo_bytes", "capacity_hi_bytes",
         "latency_cycles", "latency_ns", "step_cycles", "step_ns", "confidence"});
  for (const std::string& name : path_order(p)) level_rows(f, "latency", name, p.paths.at(name));
  for (const std::string& key : detail::tlb_order(p)) level_rows(f, "tlb", key, p.tlb.at(key));
  f.close();
  written.push_back(levels);
  return written;
}

}  // namespace gd::report
