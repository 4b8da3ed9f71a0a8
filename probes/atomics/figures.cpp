// The atomics probe's headline figures (GPU-free, part of the core library): the ids
// figure_ids() declares, and the text their `where` shares with the report.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "atomics/atomics.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/units.hpp"

namespace gd {

namespace {

std::string fixed(double v, int d) { return format_fixed(v, d); }

}  // namespace

std::string placement_spread_text(const std::optional<PlacementSpread>& s, const std::string& what,
                                  const std::string& unit, int decimals) {
  if (!s || s->values.size() < 2) return {};
  return "over " + std::to_string(s->values.size()) + " " + what + " " + fixed(s->min, decimals) +
         " to " + fixed(s->max, decimals) + " " + unit + " (repeats within " +
         fixed(100 * s->repeat_spread, 1) + " %)";
}

// How far a mean over placements moves from one process to the next, relative. Where the
// flag or target lands (which L2 slices) follows the allocations made before it (another
// plan, another run), so each run's mean is one draw: its standard error is the
// placements' spread over the square root of their count, and two runs' means differ by
// sqrt(2) of that. The band is that difference's standard error times Student's t for the
// count (3.18 for 4 placements, 2.13 for 16; a flat 2 was too narrow for 4). As
// Figure::resolution, compare --baseline takes the baseline's as the band it cannot tell
// apart from noise.
std::optional<double> placement_step(const std::optional<PlacementSpread>& s) {
  if (!s || s->values.size() < 2 || s->mean == 0) return std::nullopt;
  double ss = 0;
  for (double v : s->values) ss += (v - s->mean) * (v - s->mean);
  const double n = static_cast<double>(s->values.size());
  const double step = student_t95(static_cast<int>(n) - 1) * std::sqrt(ss / (n - 1)) /
                      std::fabs(s->mean) / std::sqrt(n) * std::sqrt(2.0);
  return std::isfinite(step) && step > 0 ? std::optional<double>(step) : std::nullopt;
}

// Between two processes the mean over every placement of a global target moves more than the
// placements' spread inside one run explains: add_i32.distinct read 427.6 to 485.8 GOP/s in
// 21 processes on H200s (full, quick and standalone runs of six calls; 16 placements each,
// standard error about 2 %), all placements moving together, whichever ran before and
// however long the untimed warm-up (0.3, 1 or 2 s: no difference). No spread inside one run
// shows that, so a global throughput figure's band is at least the largest measured, 13.6 %
// (485.8 against 427.6), rounded up.
constexpr double kGlobalProcessShift = 0.14;

std::string describe(const AtomicThroughput& t) {
  std::string s = t.space + " " + (t.use_return || t.op != "add" ? t.op : "red") + " " + t.type +
                  ", " + t.contention;
  if (t.contention == "conflict") s += " " + std::to_string(t.ways) + "-way";
  if (t.space == "global" && t.scope != "gpu") s += ", scope " + t.scope;
  return s;
}

std::string gops_spread(const AtomicThroughput& t) {
  if (!t.placement_gops) return {};
  return placement_spread_text(t.placement_gops, "target placements", "GOP/s",
                               t.placement_gops->median < 10 ? 2 : 1);
}

std::vector<Figure> atomics_figures(const AtomicsProbeResult& r, const DeviceInfo& /*info*/) {
  std::vector<Figure> out;
  // Latencies as the latency probe gives them: atomics.<key> in ns (every backend has it),
  // atomics.<key>.cycles where the device has a clock, so one id never changes its unit.
  for (const auto& [key, l] : r.latency) {
    Figure f;
    f.id = "atomics." + key;
    f.label = "hand-over latency, " + key;
    f.higher_is_better = false;
    f.status = l.status;
    f.instruction = l.instruction.value_or("");
    f.clock_mhz = l.clock_mhz;
    f.where = std::to_string(l.round_trips) + " round trips per repeat";
    if (l.sm_a && l.sm_b)
      f.where += ", SMs " + std::to_string(*l.sm_a) + " and " + std::to_string(*l.sm_b);
    if (l.locations > 1)
      f.where += ", mean over " + std::to_string(l.locations) + " flag locations";
    f.unit = "ns";
    f.value = l.ns;
    f.resolution = placement_step(l.placement_ns);
    if (!l.ns && f.status.ok()) f.status = {StatusCode::error, "no value"};
    if (l.cycles) {
      Figure c = f;
      c.id += ".cycles";
      c.unit = "cycles";
      c.value = l.cycles;
      c.resolution = placement_step(l.placement_cycles);
      out.push_back(std::move(f));
      out.push_back(std::move(c));
    } else {
      out.push_back(std::move(f));
    }
  }
  if (r.matrix) {
    const SmMatrix& m = *r.matrix;
    const std::pair<const char*, double> parts[] = {
        {"min", m.summary.all.min}, {"median", m.summary.all.median}, {"max", m.summary.all.max}};
    for (const auto& [name, v] : parts) {
      Figure f;
      f.id = std::string("atomics.sm_matrix.") + name + (m.unit == "cycles" ? ".cycles" : "");
      f.label = std::string("SM-to-SM hand-over latency, ") + name + " over pairs";
      f.unit = m.unit;
      f.higher_is_better = false;
      f.status = m.status;
      f.instruction = m.instruction.value_or("");
      f.clock_mhz = m.clock_mhz;
      f.where = std::to_string(m.sms) + " SMs, " + std::to_string(m.summary.all.n) + " pairs";
      if (m.summary.all.n) {
        f.value = single_value(v);
      } else if (f.status.ok()) {
        f.status = {StatusCode::error, "no pair measured"};
      }
      out.push_back(std::move(f));
    }
  }
  for (const auto& [key, t] : r.throughput) {
    Figure f;
    f.id = "atomics." + key;
    f.label = "atomic throughput, " + describe(t);
    f.unit = "GOP/s";
    f.value = t.gops;
    if (t.ops_per_clk_sm) {
      f.per_sm_per_clk = t.ops_per_clk_sm->median;
      f.per_sm_per_clk_unit = "ops/clk/SM";
    }
    f.instruction = t.instruction.value_or("");
    f.clock_mhz = t.clock_mhz;
    f.status = t.status;
    f.where = std::to_string(t.ops_per_launch) + " thread-level atomics per launch on " +
              std::to_string(t.sms) + " SMs";
    if (!t.note.empty()) f.where += "; " + t.note;
    if (const std::string sp = gops_spread(t); !sp.empty()) f.where += "; " + sp;
    f.resolution = placement_step(t.placement_gops);
    if (t.space == "global" && t.placement_gops)
      f.resolution = std::max(f.resolution.value_or(0.0), kGlobalProcessShift);
    if (f.status.ok() && !f.value) f.status = {StatusCode::error, "no value"};
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> atomics_figure_ids() {
  // Latency keys: <space>.<kind>_pingpong, host.pingpong; throughput keys:
  // <space>.<op>_<type>.<contention>[.<scope>] (AtomicThroughput::key).
  return {"atomics.{space}.{kind}_pingpong",
          "atomics.{space}.{kind}_pingpong.cycles",
          "atomics.host.pingpong",
          "atomics.host.pingpong.cycles",
          "atomics.sm_matrix.{stat}",
          "atomics.sm_matrix.{stat}.cycles",
          "atomics.{space}.{op}.{contention}",
          "atomics.{space}.{op}.{contention}.{scope}"};
}

}  // namespace gd
