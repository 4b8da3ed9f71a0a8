// The soak loop (soak_cmd.hpp) and its table on the terminal.
#include "soak_cmd.hpp"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "backends.hpp"
#include "gpudissect/json_read.hpp"
#include "gpudissect/soak.hpp"
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/units.hpp"
#include "output.hpp"
#include "registry.hpp"

namespace gd::cli {

namespace {

using Clock = std::chrono::steady_clock;

// 75 -> "1m15s"
std::string minutes(double s) {
  const long total = static_cast<long>(s + 0.5);
  std::string out;
  if (total >= 3600) out += std::to_string(total / 3600) + "h";
  if (total >= 60) out += std::to_string(total / 60 % 60) + "m";
  return out + std::to_string(total % 60) + "s";
}

std::optional<EccCounts> read_ecc(Device& dev) {
  const auto e = ecc_counts(dev.info());
  if (!e) return std::nullopt;
  return EccCounts{e->first, e->second};
}

std::string pct(std::optional<double> v) {
  if (!v) return "-";
  return (*v >= 0 ? "+" : "") + format_fixed(100 * *v, 1) + " %";
}

std::string val(std::optional<double> v) {
  return v ? format_fixed(*v, std::abs(*v) < 10 ? 3 : 1) : "-";
}

// One line per repetition on stderr: how far the soak is and what got worse.
std::string repetition_line(const Soak& soak, double elapsed, double duration, double tol) {
  std::string s = "soak: repetition " + std::to_string(soak.repetitions()) + " done at " +
                  minutes(elapsed) + " of " + minutes(duration);
  const SoakSeries* worst = nullptr;
  for (const SoakSeries& x : soak.series()) {
    const auto c = x.worst_change();
    if (!c) continue;
    const double bad = x.higher_is_better ? -*c : *c;
    const auto wc = worst ? worst->worst_change() : std::nullopt;
    if (!worst || bad > (worst->higher_is_better ? -*wc : *wc)) worst = &x;
  }
  if (worst) s += "; furthest from the first: " + worst->id + " " + pct(worst->worst_change());
  const auto reg = soak.regressions();
  s += reg.empty() ? "; none worse by over " + format_fixed(100 * tol, 1) + " %"
                   : "; " + std::to_string(reg.size()) + " worse by over " +
                         format_fixed(100 * tol, 1) + " %";
  return s;
}

std::string ecc_text(const nlohmann::json& e) {
  if (!e.is_object()) return "not available";
  // A count that is absent or not a whole number in range reads as 0.
  auto count = [&](const char* key) {
    auto it = e.find(key);
    return it == e.end() ? uint64_t(0) : gd::json_to_integer<uint64_t>(*it).value_or(0);
  };
  return std::to_string(count("corrected")) + " corrected, " +
         std::to_string(count("uncorrected")) + " uncorrected";
}

void print_soak(std::ostream& os, const Soak& soak, const nlohmann::json& j) {
  os << "\nSoak: " << soak.repetitions() << " repetitions in " << minutes(j.value("elapsed_s", 0.0))
     << " (asked " << minutes(j.value("duration_s", 0.0))
     << (j.value("complete", false) ? "" : ", stopped early") << "), tolerance "
     << format_fixed(j.value("tolerance_percent", 0.0), 1) << " %\n";
  os << "  " << std::left << std::setw(44) << "figure" << std::right << std::setw(12) << "first"
     << std::setw(12) << "last" << std::setw(12) << "worst" << std::setw(10) << "drift"
     << "  unit\n";
  for (const SoakSeries& s : soak.series())
    os << "  " << std::left << std::setw(44) << s.id << std::right << std::setw(12)
       << val(s.first()) << std::setw(12) << val(s.last()) << std::setw(12) << val(s.worst())
       << std::setw(10) << pct(s.drift()) << "  " << s.unit << "\n";
  os << "  throttle events: ";
  const auto t = soak.throttle_events();
  if (!t) os << "not available (no NVML)";
  if (t && t->empty()) os << "none";
  if (t)
    for (const auto& [why, n] : *t) os << why << " x" << n << " ";
  os << "\n  ECC errors before: " << ecc_text(j["ecc_before"])
     << "; after: " << ecc_text(j["ecc_after"]) << "\n";
  const auto reg = soak.regressions();
  os << "  worse than the first repetition by over the tolerance: "
     << (reg.empty() ? std::string("none") : join(reg)) << "\n";
}

// A test's made-up regression: `late` models a GPU that slows once hot (the soak judges the
// last third against the first); `from` slows every repetition from one on.
void inject(const std::vector<SoakInjection>& injections, std::size_t repetition, double started_s,
            double duration_s, std::vector<Figure>& figures) {
  for (const SoakInjection& i : injections)
    for (Figure& f : figures)
      if (f.id == i.figure && f.value &&
          (i.late ? started_s >= duration_s * 2 / 3 : repetition >= i.from)) {
        Summary& v = *f.value;
        for (double* x : {&v.median, &v.q1, &v.q3, &v.min, &v.max}) *x *= i.factor;
      }
}

}  // namespace

std::vector<SoakInjection> parse_injections(const std::vector<std::string>& raw) {
  std::vector<SoakInjection> out;
  for (const std::string& s : raw) {
    const auto bad = [&] {
      return UsageError(
          "--inject '" + s +
          "': expected slow:REPETITION:FIGURE:FACTOR (REPETITION a number from 1, or late), e.g. "
          "slow:2:bandwidth.l1.read:0.5");
    };
    const auto a = s.find(':'), b = s.find(':', a + 1), c = s.rfind(':');
    if (s.compare(0, a, "slow") != 0 || a == std::string::npos || b == std::string::npos || c <= b)
      throw bad();
    SoakInjection i;
    try {
      std::size_t used = 0;
      if (s.substr(a + 1, b - a - 1) == "late") {
        i.late = true;
      } else {
        const long rep = std::stol(s.substr(a + 1, b - a - 1), &used);
        if (used != b - a - 1 || rep < 1) throw bad();
        i.from = static_cast<std::size_t>(rep);
      }
      i.factor = std::stod(s.substr(c + 1), &used);
      if (used != s.size() - c - 1 || !(i.factor > 0)) throw bad();
    } catch (const std::logic_error&) {  // stol/stod: not a number, out of range
      throw bad();
    }
    i.figure = s.substr(b + 1, c - b - 1);
    if (i.figure.empty()) throw bad();
    out.push_back(i);
  }
  return out;
}

int run_soak(const RunArgs& a, const RunPlan& plan, RunSession& s, double duration_s,
             double tolerance) {
  const ProbeRegistry& registry = probe_registry();
  Soak soak(duration_s, tolerance);
  const std::vector<SoakInjection> injections = parse_injections(a.inject);
  const std::optional<EccCounts> ecc_before = read_ecc(s.dev);
  soak.set_ecc(ecc_before, std::nullopt);
  const Clock::time_point t0 = Clock::now();
  std::optional<RunResult> last;  // the last repetition that ran to its end
  int measured = 0;
  auto save = [&](const RunResult& r) { report::write_json(s.out.json, r, registry); };
  while (!last || (!g_stop && seconds_since(t0) < duration_s)) {  // at least one
    RunResult r = s.result;
    std::vector<GpuStateSample> samples = s.samples;  // the first: the reading before it all
    if (last) samples = {sample_gpu(s.dev, plan.probes.front(), "before")};
    soak.set_finished(false, seconds_since(t0));
    r.soak = soak.to_json();  // the repetitions so far, in every file this one writes
    const double started = seconds_since(t0);
    const int rc = measure_probes(s.dev, plan, r, s.progress, samples, s.deadline, save);
    if (g_stop && last) break;  // a repetition cut short is no point of the series
    measured |= rc;
    inject(injections, soak.repetitions() + 1, started, duration_s, r.figures);
    if (!g_stop) soak.add({started, seconds_since(t0) - started, rc}, r.figures, r.gpu_state);
    last = std::move(r);
    soak.set_ecc(ecc_before, read_ecc(s.dev));
    soak.set_finished(!g_stop && seconds_since(t0) >= duration_s, seconds_since(t0));
    last->soak = soak.to_json();
    save(*last);
    s.progress.note(repetition_line(soak, seconds_since(t0), duration_s, tolerance));
  }
  s.deadline.disarm();
  soak.set_finished(!g_stop && seconds_since(t0) >= duration_s, seconds_since(t0));
  last->soak = soak.to_json();
  save(*last);
  std::vector<std::filesystem::path> written = {s.out.json};
  for (const auto& f : write_reports(a, s.out, *last)) written.push_back(f);
  report::print_summary(std::cout, *last, registry);
  print_soak(std::cout, soak, *last->soak);
  say_written(written);
  const int rc = run_exit_status(measured, s.deadline);
  if (rc == 0 && !soak.regressions().empty()) return kExitSoakRegressed;
  return rc;
}

}  // namespace gd::cli
