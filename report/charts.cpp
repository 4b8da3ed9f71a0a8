// Charts through gnuplot, run as a subprocess on a script with the data inline.
#include "charts.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "gpudissect/shell.hpp"
#include "gpudissect/units.hpp"
#include "output.hpp"
#include "report.hpp"
#include "sections.hpp"

namespace gd::report {

namespace fs = std::filesystem;

namespace detail {

namespace {

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
constexpr const char* kLevelColour = "#b03a2e";
// Room above the highest point for the level and capacity labels.
constexpr double kHeadroom = 1.3;

enum class Unit { cycles, ns };

const std::optional<Summary>& value(const LatencyPoint& p, Unit u) {
  return u == Unit::cycles ? p.cycles : p.ns;
}
const std::optional<double>& value(const Level& l, Unit u) {
  return u == Unit::cycles ? l.latency_cycles : l.latency_ns;
}
const char* unit_name(Unit u) { return u == Unit::cycles ? "cycles" : "ns"; }

bool has(const CurveResult& c, Unit u) {
  for (const LatencyPoint& p : c.points)
    if (p.status.ok() && value(p, u) && p.footprint_bytes > 0) return true;
  return false;
}

// An inline data block "$name" with x, median, q1, q3 of the ok points.
std::string data_block(const std::string& name, const CurveResult& c, Unit u, double* ymax) {
  std::string s = "$" + name + " << EOD\n";
  for (const LatencyPoint& p : c.points) {
    const auto& v = value(p, u);
    if (!p.status.ok() || !v || p.footprint_bytes == 0) continue;
    s += std::to_string(p.footprint_bytes) + ' ' + script_num(v->median) + ' ' + script_num(v->q1) +
         ' ' + script_num(v->q3) + '\n';
    if (ymax) *ymax = std::max({*ymax, v->median, v->q3});
  }
  return s + "EOD\n";
}

// Footprint range over the ok points of the curves.
struct XRange {
  double lo = 0, hi = 0;
  void add(const CurveResult& c) {
    for (const LatencyPoint& p : c.points) {
      if (!p.status.ok() || p.footprint_bytes == 0) continue;
      const double x = static_cast<double>(p.footprint_bytes);
      lo = lo == 0 ? x : std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
  bool empty() const { return hi <= 0; }
};

// Log2 x axis over the range with explicit byte labels (1K, 4K, ... 1M, ... 1G).
std::string x_axis(const XRange& xr) {
  const int k_lo = static_cast<int>(std::floor(std::log2(xr.lo) + 1e-9));
  const int k_hi = static_cast<int>(std::ceil(std::log2(xr.hi) - 1e-9));
  const int span = std::max(1, k_hi - k_lo);
  int step = span > 8 ? 2 : 1;
  while (span / step > 11) ++step;
  std::string tics;
  for (int k = k_lo; k <= k_hi; ++k) {
    if (k % step != 0) continue;
    if (!tics.empty()) tics += ", ";
    tics +=
        gnuplot_quote(axis_bytes_label(std::ldexp(1.0, k))) + ' ' + script_num(std::ldexp(1.0, k));
  }
  std::string s = "set logscale x 2\n";
  s += "set xrange [" + script_num(xr.lo / 1.25) + ":" + script_num(xr.hi * 1.25) + "]\n";
  s += "set xtics (" + tics + ")\n";
  s += "set xlabel 'footprint (bytes, log scale)'\n";
  return s;
}

std::string common_settings(const std::string& title) {
  std::string s = "set encoding utf8\n";
  s += "set title " + gnuplot_quote(title) + "\n";
  s += "set grid xtics ytics lc rgb '#dddddd' lw 1 dt 1\n";
  s += "set border 3 lc rgb '#444444'\n";
  s += "set tics nomirror out\n";
  s += "set datafile separator whitespace\n";
  return s;
}

double level_capacity(const Level& l) {
  if (l.capacity_bytes) return static_cast<double>(*l.capacity_bytes);
  if (l.capacity_lo_bytes && l.capacity_hi_bytes)
    return std::sqrt(static_cast<double>(*l.capacity_lo_bytes) *
                     static_cast<double>(*l.capacity_hi_bytes));
  return 0;
}

// Level marks for one curve: a dashed segment at each level's latency over its plateau,
// a shaded band over the capacity interval with a line and a label at the capacity.
std::string level_marks(const CurveResult& c, Unit u, const XRange& xr, const std::string& colour,
                        bool label_capacity, int* object_id) {
  std::string s;
  double prev_cap = 0;
  bool prev_low = false;
  double x0 = xr.lo;
  for (std::size_t i = 0; i < c.levels.size(); ++i) {
    const Level& l = c.levels[i];
    const double cap = level_capacity(l);
    const bool last = cap <= 0;
    double x1 = last ? xr.hi : cap;
    if (!last && l.capacity_lo_bytes) x1 = static_cast<double>(*l.capacity_lo_bytes);
    const auto& y = value(l, u);
    if (y && x1 > 0) {
      const double a = std::max(x0, xr.lo), b = std::max(std::min(x1, xr.hi), a);
      s += "set arrow from " + script_num(a) + "," + script_num(*y) + " to " + script_num(b) + "," +
           script_num(*y) + " nohead dt 2 lw 2.5 lc rgb '" + colour + "' front\n";
      const std::string text =
          l.name + ": " + format_fixed(*y, *y < 100 ? 1 : 0) + " " + unit_name(u);
      // The last plateau ends at the right edge: label it from its right end.
      if (last || i + 1 == c.levels.size())
        s += "set label " + gnuplot_quote(text) + " at " + script_num(b) + "," + script_num(*y) +
             " right offset 0,0.9 tc rgb '" + colour + "' front\n";
      else
        s += "set label " + gnuplot_quote(text) + " at " + script_num(a) + "," + script_num(*y) +
             " left offset 0.3,0.9 tc rgb '" + colour + "' front\n";
    }
    if (!last) {
      if (l.capacity_lo_bytes && l.capacity_hi_bytes)
        s += "set object " + std::to_string((*object_id)++) + " rect from " +
             script_num(static_cast<double>(*l.capacity_lo_bytes)) + ", graph 0 to " +
             script_num(static_cast<double>(*l.capacity_hi_bytes)) + ", graph 1 fc rgb '" + colour +
             "' fs transparent solid 0.10 noborder behind\n";
      s += "set arrow from " + script_num(cap) + ", graph 0 to " + script_num(cap) +
           ", graph 1 nohead dt 3 lw 1 lc rgb '" + colour + "' back\n";
      if (label_capacity) {
        // Along the top, right of the line (left of it near the right edge); a label close
        // to the one before goes a line lower so that they do not overlap.
        const bool near_end = std::log2(xr.hi * 1.25 / cap) < 3.5;
        const bool close = prev_cap > 0 && std::log2(cap / prev_cap) < 4;
        const std::string height = (close && !prev_low) ? "0.89" : "0.96";
        prev_low = close && !prev_low;
        prev_cap = cap;
        s += "set label " + gnuplot_quote(l.name + " ≈ " + format_bytes(cap)) + " at " +
             script_num(cap) + ", graph " + height +
             (near_end ? " right offset -0.5,0" : " left offset 0.5,0") + " tc rgb '" + colour +
             "' front\n";
      }
      x0 = l.capacity_hi_bytes ? static_cast<double>(*l.capacity_hi_bytes) : cap;
    }
  }
  return s;
}

std::string series_style(int i) {
  return "lw 2 pt 7 ps 0.6 lc rgb '" + std::string(kPalette[i % 8]) + "'";
}

}  // namespace

std::string gnuplot_executable() {
  const char* e = std::getenv("GD_GNUPLOT");
  return (e && *e) ? std::string(e) : std::string("gnuplot");
}

std::optional<ChartSpec> path_chart(const std::string& path, const CurveResult& c) {
  const bool cyc = has(c, Unit::cycles), ns = has(c, Unit::ns);
  if (!cyc && !ns) return std::nullopt;
  XRange xr;
  xr.add(c);
  const Unit u = cyc ? Unit::cycles : Unit::ns;
  ChartSpec spec;
  spec.name = "latency_" + slugify(path);
  spec.title = "Latency against footprint: " + path;
  std::string& s = spec.script;
  s += common_settings(spec.title);
  double ymax = 0;
  s += data_block("p", c, u, &ymax);
  s += x_axis(xr);
  s += "set ylabel " + gnuplot_quote(std::string("latency per load (") + unit_name(u) + ")") + "\n";
  s += "set yrange [0:" + script_num(ymax * kHeadroom) + "]\n";
  std::string plot = "plot $p using 1:2:3:4 with yerrorlines " + series_style(0) + " title " +
                     gnuplot_quote(std::string(unit_name(u)) + (cyc && ns ? " (left axis)" : "")) +
                     ", \\\n";
  if (cyc && ns) {
    // ns on the right axis, scaled so that it lies on the cycles curve at the run's clock.
    std::vector<double> ratios;
    for (const LatencyPoint& p : c.points)
      if (p.status.ok() && p.cycles && p.ns && p.cycles->median > 0)
        ratios.push_back(p.ns->median / p.cycles->median);
    std::sort(ratios.begin(), ratios.end());
    const double k = ratios.empty() ? 1.0 : ratios[ratios.size() / 2];
    double nmax = 0;
    s += data_block("n", c, Unit::ns, &nmax);
    const double y2max = std::max(ymax * kHeadroom * k, nmax * 1.05);
    s += "set y2range [0:" + script_num(y2max) + "]\n";
    s += "set y2tics nomirror out\n";
    s += "set y2label 'latency per load (ns)'\n";
    plot += "     $n using 1:2 axes x1y2 with lines dt 4 lw 1.5 lc rgb '#ff7f0e' title " +
            gnuplot_quote("ns (right axis)") + ", \\\n";
  }
  int object_id = 1;
  s += level_marks(c, u, xr, kLevelColour, true, &object_id);
  s += "set key bottom right box opaque\n";
  plot.resize(plot.size() - 4);  // drop the last ", \\\n"
  s += plot + "\n";
  return spec;
}

std::optional<ChartSpec> combined_chart(const RunResult& r) {
  if (!r.get<LatencyProbeResult>()) return std::nullopt;
  const LatencyProbeResult& p = *r.get<LatencyProbeResult>();
  std::vector<std::string> names;
  bool all_cycles = true;
  for (const std::string& n : path_order(p)) {
    const CurveResult& c = p.paths.at(n);
    if (!has(c, Unit::cycles) && !has(c, Unit::ns)) continue;
    names.push_back(n);
    if (!has(c, Unit::cycles)) all_cycles = false;
  }
  if (names.empty()) return std::nullopt;
  const Unit u = all_cycles ? Unit::cycles : Unit::ns;
  XRange xr;
  for (const auto& n : names) xr.add(p.paths.at(n));
  ChartSpec spec;
  spec.name = "latency_all";
  spec.title = r.device.name + ": latency against footprint, all paths";
  std::string& s = spec.script;
  s += common_settings(spec.title);
  double ymax = 0;
  std::string plot = "plot ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string block = "d" + std::to_string(i);
    s += data_block(block, p.paths.at(names[i]), u, &ymax);
    plot += (i ? ", \\\n     " : "") + std::string("$") + block + " using 1:2 with linespoints " +
            series_style(static_cast<int>(i)) + " title " + gnuplot_quote(names[i]);
  }
  s += x_axis(xr);
  s += "set ylabel " + gnuplot_quote(std::string("latency per load (") + unit_name(u) + ")") + "\n";
  s += "set yrange [0:" + script_num(ymax * 1.1) + "]\n";
  s += "set key bottom right box opaque\n";
  s += plot + "\n";
  return spec;
}

std::optional<ChartSpec> tlb_chart(const LatencyProbeResult& p) {
  std::vector<std::string> keys;
  bool all_cycles = true;
  for (const std::string& k : tlb_order(p)) {
    const CurveResult& c = p.tlb.at(k);
    if (!has(c, Unit::cycles) && !has(c, Unit::ns)) continue;
    keys.push_back(k);
    if (!has(c, Unit::cycles)) all_cycles = false;
  }
  if (keys.empty()) return std::nullopt;
  const Unit u = all_cycles ? Unit::cycles : Unit::ns;
  XRange xr;
  for (const auto& k : keys) xr.add(p.tlb.at(k));
  ChartSpec spec;
  spec.name = "tlb";
  spec.title = "TLB: latency against footprint at page-sized strides";
  std::string& s = spec.script;
  s += common_settings(spec.title);
  double ymax = 0;
  std::string plot = "plot ";
  int object_id = 1;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const CurveResult& c = p.tlb.at(keys[i]);
    const std::string block = "t" + std::to_string(i);
    s += data_block(block, c, u, &ymax);
    plot += (i ? ", \\\n     " : "") + std::string("$") + block +
            " using 1:2:3:4 with yerrorlines " + series_style(static_cast<int>(i)) + " title " +
            gnuplot_quote("stride " + tlb_stride_label(keys[i], c));
  }
  s += x_axis(xr);
  for (std::size_t i = 0; i < keys.size(); ++i)
    s += level_marks(p.tlb.at(keys[i]), u, xr, kPalette[i % 8], keys.size() == 1, &object_id);
  s += "set ylabel " + gnuplot_quote(std::string("latency per load (") + unit_name(u) + ")") + "\n";
  s += "set yrange [0:" + script_num(ymax * kHeadroom) + "]\n";
  s += "set key bottom right box opaque\n";
  s += plot + "\n";
  return spec;
}

std::vector<ChartSpec> chart_specs(const RunResult& r) {
  std::vector<ChartSpec> out;
  if (!r.get<LatencyProbeResult>()) return out;
  if (auto c = combined_chart(r)) out.push_back(std::move(*c));
  for (const std::string& n : path_order(*r.get<LatencyProbeResult>()))
    if (auto c = path_chart(n, r.get<LatencyProbeResult>()->paths.at(n)))
      out.push_back(std::move(*c));
  if (auto c = tlb_chart(*r.get<LatencyProbeResult>())) out.push_back(std::move(*c));
  return out;
}

namespace {

// A scratch folder for one gnuplot run, removed when done.
struct ScratchDir {
  fs::path dir;
  ScratchDir() {
    static std::atomic<unsigned> counter{0};
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    dir =
        base / ("gpudissect-chart-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(dir, ec);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

bool render_chart(const ChartSpec& spec, ChartFormat fmt, const fs::path& out, std::string* err) {
  ScratchDir scratch;
  const fs::path script = scratch.dir / "chart.gp";
  const fs::path errfile = scratch.dir / "stderr.txt";
  // gnuplot draws into the scratch folder; the chart then goes to `out` the way every
  // output does (output.hpp).
  const fs::path drawn = scratch.dir / (fmt == ChartFormat::svg ? "chart.svg" : "chart.png");
  {
    std::ofstream f(script, std::ios::binary);
    if (fmt == ChartFormat::svg)
      f << "set terminal svg size 900,480 font 'sans,11' noenhanced "
           "background rgb 'white'\n";
    else
      f << "set terminal pngcairo size 1200,640 font 'sans,12' noenhanced "
           "background rgb 'white'\n";
    f << "set output " << gnuplot_quote(drawn.string()) << "\n" << spec.script << "set output\n";
    if (!f) {
      if (err) *err = "cannot write the gnuplot script in " + scratch.dir.string();
      return false;
    }
  }
  std::error_code ec;
  const std::string cmd = shell_quote(gnuplot_executable()) + ' ' + shell_quote(script.string()) +
                          " </dev/null >/dev/null 2>" + shell_quote(errfile.string());
  const int rc = std::system(cmd.c_str());
  const bool ran = rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
  if (ran && fs::exists(drawn, ec) && fs::file_size(drawn, ec) > 0) {
    try {
      write_file(out, read_all(drawn));
      return true;
    } catch (const RefusedOutput&) {
      throw;
    } catch (const std::exception& e) {
      if (err) *err = e.what();
      return false;
    }
  }
  if (err) {
    std::string msg = trim(read_all(errfile));
    if (msg.size() > 600) msg = "..." + msg.substr(msg.size() - 600);
    if (msg.empty())
      msg = ran ? "gnuplot wrote no output"
                : "gnuplot exited with status " +
                      std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : rc);
    *err = msg;
  }
  return false;
}

std::optional<std::string> render_inline_svg(const ChartSpec& spec, const std::string& prefix,
                                             std::string* err) {
  // The prefix may hold a name from the file: ids take a strict shape.
  const std::string id_prefix = svg_id(prefix);
  ScratchDir scratch;
  const fs::path out = scratch.dir / "chart.svg";
  if (!render_chart(spec, ChartFormat::svg, out, err)) return std::nullopt;
  std::string svg = read_all(out);
  const auto start = svg.find("<svg");
  if (start == std::string::npos) {
    if (err) *err = "gnuplot's SVG output has no <svg> element";
    return std::nullopt;
  }
  svg.erase(0, start);
  // Several charts share one page: give each chart's ids (and references to them) a prefix.
  auto replace_all = [&svg](const std::string& from, const std::string& to) {
    for (auto pos = svg.find(from); pos != std::string::npos; pos = svg.find(from, pos + to.size()))
      svg.replace(pos, from.size(), to);
  };
  replace_all("id='", "id='" + id_prefix);
  replace_all("id=\"", "id=\"" + id_prefix);
  replace_all("href='#", "href='#" + id_prefix);
  replace_all("href=\"#", "href=\"#" + id_prefix);
  replace_all("url(#", "url(#" + id_prefix);
  replace_all("<title>Gnuplot</title>", "<title>" + html_escape(spec.title) + "</title>");
  // gnuplot names each series "gnuplot_plot_N" in a tooltip; drop those.
  for (auto pos = svg.find("<title>gnuplot_plot_"); pos != std::string::npos;
       pos = svg.find("<title>gnuplot_plot_", pos)) {
    const auto end = svg.find("</title>", pos);
    if (end == std::string::npos) break;
    svg.erase(pos, end + 8 - pos);
  }
  return svg;
}

}  // namespace detail

bool gnuplot_available(std::string* why) {
  const std::string exe = detail::gnuplot_executable();
  const std::string cmd = shell_quote(exe) + " --version </dev/null 2>&1";
  std::FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) {
    if (why) *why = "cannot start a shell to run " + exe;
    return false;
  }
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  const int rc = ::pclose(f);
  const bool ok =
      rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0 && out.find("gnuplot") != std::string::npos;
  if (!ok && why) {
    out = trim(out);
    if (out.empty()) out = "exit status " + std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : rc);
    *why = "'" + exe + " --version' failed: " + out;
  }
  return ok;
}

std::string section_chart(const detail::ChartSpec& spec, SectionContext& ctx,
                          const std::string& caption) {
  if (!ctx.charts) return {};
  std::string html, err;
  if (auto svg = detail::render_inline_svg(spec, spec.name + "-", &err)) {
    html = "<figure class=\"chart\">\n" + *svg + "\n";
    if (!caption.empty()) html += "<figcaption>" + detail::html_escape(caption) + "</figcaption>\n";
    html += "</figure>\n";
  } else {
    ctx.notes.push_back("chart " + spec.name + ": " + err);
  }
  if (ctx.png) {
    const auto png = ctx.png_dir / (detail::file_stem(spec.name) + ".png");
    if (detail::render_chart(spec, detail::ChartFormat::png, png, &err))
      ctx.pngs.push_back(png);
    else
      ctx.notes.push_back("chart " + spec.name + " (PNG): " + err);
  }
  return html;
}

std::string titled_chart(const detail::ChartSpec& spec, SectionContext& ctx) {
  const std::string fig = section_chart(spec, ctx);
  return fig.empty() ? std::string() : "<h4>" + detail::html_escape(spec.title) + "</h4>\n" + fig;
}

}  // namespace gd::report
