// The host memory probe: plain C++ threads reading, writing and copying memory, against
// footprint. No GPU is involved: it measures the machine the GPU sits in (the bound of
// pageable host transfers) and is the reference for an OpenCL CPU device such as PoCL,
// which runs the bandwidth probe's kernels on these same cores.
//
// Each of T threads owns a contiguous slice of footprint/T bytes and makes `passes` passes
// over it; a compiler barrier between passes keeps every pass's loads and stores (nothing
// can be hoisted or merged across passes). Bytes are counted as for the GPU: a read moves
// the slice once per pass, a write too, a copy twice (read + write). Every result is
// checked: the read sums are exact, written words hold their last pass's value, copies
// equal their source. Writes run twice: with plain stores (each line is read for ownership
// first) and, on x86-64, with non-temporal stores (movnti: lines written without being
// read, as glibc's memcpy does for large copies and the OpenCL CPU kernels' streaming
// stores do), so each bandwidth-probe figure on a CPU has its like here.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <thread>

#include "bandwidth/bandwidth.hpp"
#include "host_memory/host_memory.hpp"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "gpudissect/head_start.hpp"
#include "gpudissect/options.hpp"
#include "gpudissect/progress.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/units.hpp"
#include "registry.hpp"

namespace gd {

namespace {

using Clock = std::chrono::steady_clock;
const char* kName = "host";

struct HostMemoryOptions {
  uint64_t min_footprint = 16 << 10;
  std::optional<uint64_t> max_footprint;  // default: past 8x the largest OS cache
  int points_per_doubling = 1;
  int threads = 0;  // 0: every hardware thread
  int repeats = 5;
  // Per timed repeat. 5 ms: at 10 ms the repeats of an H200 host agreed within 5 % at most
  // points, and the memory figures' points take over 20 ms a pass whatever this asks.
  double min_seconds = 0.005;
  bool quick = false;  // the memory figures only: the largest footprint, 3 repeats
};

inline void compiler_barrier() { asm volatile("" ::: "memory"); }

// Page-aligned buffer of 64-bit words, touched once so that first-touch faults stay out of
// the timing.
struct Words {
  std::unique_ptr<uint64_t[], void (*)(uint64_t*)> p{nullptr, [](uint64_t* q) { std::free(q); }};
  uint64_t n = 0;
  explicit Words(uint64_t count) : n(count) {
    void* raw = nullptr;
    if (posix_memalign(&raw, 4096, std::max<uint64_t>(count, 1) * 8) != 0)
      throw AllocationFailed("cannot allocate " + format_bytes(double(count * 8)) +
                             " of host memory");
    p.reset(static_cast<uint64_t*>(raw));
  }
  // A view of `count` words that another Words owns.
  Words(uint64_t* view, uint64_t count) : p(view, [](uint64_t*) {}), n(count) {}
  uint64_t* data() const { return p.get(); }
};

// The words of each buffer of one point: a copy's footprint is both of its buffers.
uint64_t point_words(const std::string& op, uint64_t footprint, int threads) {
  return std::max<uint64_t>((op == "copy" ? footprint / 2 : footprint) / 8 / threads * threads,
                            uint64_t(threads) * 8);
}

uint64_t read_slice(const uint64_t* w, uint64_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0;  // independent sums: the loads overlap
  uint64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a += w[i];
    b += w[i + 1];
    c += w[i + 2];
    d += w[i + 3];
  }
  for (; i < n; ++i) a += w[i];
  return a + b + c + d;
}

void write_slice(uint64_t* w, uint64_t first, uint64_t n, uint64_t pass) {
  for (uint64_t i = 0; i < n; ++i) w[i] = first + i + pass;
}

#if defined(__x86_64__)
constexpr bool kStreamingStores = true;
void write_slice_streaming(uint64_t* w, uint64_t first, uint64_t n, uint64_t pass) {
  for (uint64_t i = 0; i < n; ++i)
    _mm_stream_si64(reinterpret_cast<long long*>(w + i), static_cast<long long>(first + i + pass));
  _mm_sfence();  // the stores are weakly ordered: visible before the pass ends
}
#else
constexpr bool kStreamingStores = false;
void write_slice_streaming(uint64_t*, uint64_t, uint64_t, uint64_t) {}
#endif

struct Timed {
  double seconds = 0;
  std::string check_error;
};

// One timed repeat: every thread makes `passes` passes over its slice.
Timed run_once(const std::string& op, Words& src, Words& dst, int threads, uint64_t passes) {
  const uint64_t per = src.n / threads;
  std::vector<uint64_t> sums(threads, 0);
  // Every thread waits until all have started, then times its own passes, so thread
  // start-up is not counted.
  std::atomic<int> ready{0};
  std::vector<Clock::time_point> start(threads), end(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      uint64_t* s = src.data() + t * per;
      uint64_t* d = dst.data() + t * per;
      ready.fetch_add(1);
      while (ready.load(std::memory_order_acquire) < threads) {
      }
      start[t] = Clock::now();
      uint64_t sum = 0;
      for (uint64_t pass = 0; pass < passes; ++pass) {
        if (op == "read")
          sum += read_slice(s, per);
        else if (op == "write")
          write_slice(s, t * per, per, pass);
        else if (op == "write_streaming")
          write_slice_streaming(s, t * per, per, pass);
        else
          std::memcpy(d, s, per * 8);
        compiler_barrier();
      }
      end[t] = Clock::now();
      sums[t] = sum;
    });
  for (auto& th : pool) th.join();
  Timed out;
  // The slowest thread's own working time: a thread the OS starts late (more threads than
  // free cores, as on a loaded 2-core machine) does not count its wait.
  for (int t = 0; t < threads; ++t)
    out.seconds = std::max(out.seconds, std::chrono::duration<double>(end[t] - start[t]).count());
  // Checks: the words hold i (read, copy source) or i + last pass (write).
  for (int t = 0; t < threads && out.check_error.empty(); ++t) {
    const uint64_t first = t * per;
    if (op == "read") {
      // sum of first .. first+per-1, mod 2^64, times the passes
      const unsigned __int128 lo = first, hi = first + per;
      const uint64_t one = static_cast<uint64_t>((hi * (hi - 1) - lo * (lo - (lo ? 1 : 0))) / 2);
      const uint64_t want = one * passes;
      if (sums[t] != want)
        out.check_error = "thread " + std::to_string(t) + " read sum " + std::to_string(sums[t]) +
                          ", expected " + std::to_string(want);
    } else {
      const bool write = op != "copy";
      const uint64_t* w = write ? src.data() : dst.data();
      const uint64_t add = write ? passes - 1 : 0;
      for (uint64_t i = 0; i < per; i += 4099)
        if (w[first + i] != first + i + add) {
          out.check_error = op + ": word " + std::to_string(first + i) + " holds " +
                            std::to_string(w[first + i]) + ", expected " +
                            std::to_string(first + i + add);
          break;
        }
    }
  }
  return out;
}

// Word i = i in the source (and zeros in a copy's destination), written by the threads that
// will use each slice: filling gigabytes from one thread took longer than measuring them.
void fill_in_parallel(Words& src, Words& dst, bool zero_dst, int threads) {
  const uint64_t per = src.n / threads;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const uint64_t first = t * per, last = t + 1 == threads ? src.n : first + per;
      for (uint64_t i = first; i < last; ++i) src.data()[i] = i;
      if (zero_dst) std::memset(dst.data() + first, 0, (last - first) * 8);
    });
  for (auto& th : pool) th.join();
}

// The OS's description of the caches of CPU 0, and the largest one's size.
std::vector<std::string> os_caches(uint64_t* largest) {
  std::vector<std::string> out;
  *largest = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level(dir + "level"), type(dir + "type"), size(dir + "size");
    std::string l, t, s;
    if (!(level >> l) || !(type >> t) || !(size >> s)) break;
    if (t == "Instruction") continue;
    out.push_back("L" + l + (t == "Data" ? "d" : "") + " " + s);
    if (auto b = parse_bytes(s)) *largest = std::max(*largest, *b);
  }
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto c = line.find(':');
      if (c != std::string::npos) return line.substr(c + 2);
    }
  return {};
}

// shape: the copy and read sweeps and the memory figure, in the order they run
void run_host_memory(const HostMemoryOptions& opt, Progress& progress,
                     const std::atomic<bool>& stop, HostMemoryResult& out) {
  HeadStart::wait_for_current();  // host memory is timed on the CPU: no compiles beside it
  const auto t0 = Clock::now();
  out.threads = opt.threads > 0 ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  out.cpu = cpu_model();
  uint64_t largest_cache = 0;
  out.caches = os_caches(&largest_cache);
  const uint64_t max_fp = opt.max_footprint.value_or(
      std::max<uint64_t>(256ull << 20, 8 * std::max<uint64_t>(largest_cache, 32ull << 20)));
  std::vector<uint64_t> footprints;
  const double step = std::pow(2.0, 1.0 / opt.points_per_doubling);
  for (double f = double(opt.min_footprint); f <= double(max_fp) * 1.0001; f *= step)
    footprints.push_back(uint64_t(f));
  if (opt.quick && !footprints.empty()) footprints = {footprints.back()};

  const std::vector<std::string> ops = {"read", "write", "write_streaming", "copy"};
  // One buffer for every point of every curve, first touched once by the threads: allocating
  // and first-touching a buffer per point costs page faults on every byte of every point
  // (about 4 GiB a curve on an H200 host). Where that much cannot be had, each point
  // allocates its own, as before.
  std::optional<Words> arena;
  try {
    if (!footprints.empty()) {
      arena.emplace(point_words("read", footprints.back(), out.threads));
      Words none(1);
      fill_in_parallel(*arena, none, false, out.threads);
    }
  } catch (const AllocationFailed&) {
    arena.reset();
  }
  int n = 0;
  const int total = int(ops.size() * footprints.size());
  for (const std::string& op : ops) {
    BandwidthCurve& curve = out.curves[op];
    curve.x_unit = "footprint_bytes";
    curve.timed_instruction = op == "copy"              ? "memcpy"
                              : op == "read"            ? "64-bit loads"
                              : op == "write_streaming" ? "64-bit non-temporal stores (movnti)"
                                                        : "64-bit stores";
    if (op == "write_streaming" && !kStreamingStores) {
      curve.status = {StatusCode::unsupported,
                      "non-temporal stores are measured on x86-64 hosts only"};
      n += int(footprints.size());
      continue;
    }
    const auto c0 = Clock::now();
    for (uint64_t fp : footprints) {
      progress.step(kName, op, ++n, total, format_bytes(double(fp)));
      if (stop) {
        curve.status = {StatusCode::interrupted, "stopped by the user"};
        break;
      }
      BandwidthPoint pt;
      pt.x = double(fp);
      const uint64_t words = point_words(op, fp, out.threads);
      const bool copy = op == "copy";
      const bool shared = arena && arena->n >= (copy ? 2 : 1) * words;
      try {
        Words src = shared ? Words(arena->data(), words) : Words(words);
        Words dst = !copy ? Words(1) : shared ? Words(arena->data() + words, words) : Words(words);
        fill_in_parallel(src, dst, op == "copy", out.threads);
        // Passes for a repeat of at least min_seconds: grow until a repeat is long enough to
        // scale from (the first one also warms the caches and the TLB).
        uint64_t passes = 1;
        for (;;) {
          const Timed t = run_once(op, src, dst, out.threads, passes);
          if (t.seconds >= opt.min_seconds / 4 || passes >= (1u << 24)) {
            passes = std::clamp<uint64_t>(
                uint64_t(double(passes) * opt.min_seconds / std::max(t.seconds, 1e-9)) + 1, 1,
                1u << 24);
            break;
          }
          passes *= 8;
        }
        const uint64_t bytes = words * 8 * passes * (op == "copy" ? 2 : 1);
        (op == "read" || op == "copy" ? pt.read_bytes : pt.write_bytes) = words * 8 * passes;
        if (op == "copy") pt.write_bytes = words * 8 * passes;
        std::vector<double> gbps, secs;
        for (int r = 0; r < opt.repeats; ++r) {
          const Timed t = run_once(op, src, dst, out.threads, passes);
          if (!t.check_error.empty()) throw std::runtime_error(t.check_error);
          gbps.push_back(double(bytes) / t.seconds / 1e9);
          secs.push_back(t.seconds);
        }
        pt.gbps = summarize(gbps);
        pt.seconds = summarize(secs);
      } catch (const AllocationFailed& e) {
        pt.status = {StatusCode::skipped, e.what()};
      } catch (const std::exception& e) {
        pt.status = {StatusCode::error, e.what()};
        curve.status = {StatusCode::error, std::string("check failed: ") + e.what()};
      }
      curve.points.push_back(pt);
    }
    curve.wall_seconds = std::chrono::duration<double>(Clock::now() - c0).count();
    // The memory figure: the largest footprint, where it is past 4x the largest cache (past
    // 256 MiB where the OS describes no cache).
    const double past_caches = largest_cache ? 4.0 * double(largest_cache) : double(256 << 20);
    for (auto it = curve.points.rbegin(); it != curve.points.rend(); ++it) {
      if (!it->status.ok() || !it->gbps) continue;
      if (it->x < past_caches) break;
      BandwidthFigure f;
      f.name = op == "write_streaming" ? "memory write, non-temporal" : "memory " + op;
      f.gbps = *it->gbps;
      f.timed_instruction = curve.timed_instruction;
      f.where = op + " at " + format_bytes(it->x) + ", " + std::to_string(out.threads) + " threads";
      out.figures.push_back(f);
      break;
    }
    if (stop) break;
  }
  if (stop && out.status.ok()) out.status = {StatusCode::interrupted, "stopped by the user"};
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

// Figure names -> the ids the probe declares; a name not listed gives no figure.
const std::map<std::string, std::string> kFigureIds = {
    {"memory read", "host.memory.read"},
    {"memory write", "host.memory.write"},
    {"memory copy", "host.memory.copy"},
    {"memory write, non-temporal", "host.memory.write_streaming"},
};

class HostMemoryProbe final : public TypedProbe<HostMemoryOptions, HostMemoryResult> {
 public:
  std::string name() const override { return kName; }
  std::string description() const override {
    return "the host CPU's memory read/write/copy bandwidth against footprint (plain C++ "
           "threads): the bound of pageable transfers, and the reference for OpenCL on a CPU";
  }
  std::vector<OptionSpec> options() const override {
    return {{"min_footprint", "16K", "smallest footprint (all threads together)"},
            {"max_footprint", "",
             "largest footprint (default: 8x the largest OS cache, at least 256M)"},
            {"points_per_doubling", "1", "footprints per factor of two"},
            {"threads", "", "threads (default: every hardware thread)"},
            {"repeats", "5", "timed repeats per point"},
            {"quick", "0", "the memory figures only: the largest footprint, 3 repeats"}};
  }

 protected:
  HostMemoryOptions parse(const OptionValues& kv) const override {
    HostMemoryOptions o;
    for (const auto& [k, v] : kv) {
      if (k == "min_footprint")
        o.min_footprint = options::bytes(kName, k, v);
      else if (k == "max_footprint")
        o.max_footprint = options::bytes(kName, k, v);
      else if (k == "points_per_doubling")
        o.points_per_doubling = options::integer(kName, k, v, 1, 8);
      else if (k == "threads")
        o.threads = options::integer(kName, k, v, 1, 4096);
      else if (k == "repeats")
        o.repeats = options::integer(kName, k, v, 1, 50);
      else if (k == "quick")
        o.quick = options::flag(kName, k, v);
      else
        options::unknown_key(kName, k, options());
    }
    if (o.quick && !kv.count("repeats")) o.repeats = 3;
    if (o.max_footprint && *o.max_footprint < o.min_footprint)
      throw std::invalid_argument("option host.max_footprint is below host.min_footprint");
    return o;
  }
  void run_typed(Device&, const HostMemoryOptions& opt, const RunResult&, Progress& progress,
                 const std::atomic<bool>& stop, HostMemoryResult& out) const override {
    run_host_memory(opt, progress, stop, out);
  }

 public:
  std::vector<std::string> figure_ids() const override {
    std::vector<std::string> out;
    for (const auto& [name, id] : kFigureIds) out.push_back(id);
    return out;
  }
  std::vector<Figure> figures(const RunResult& r) const override {
    std::vector<Figure> out;
    const HostMemoryResult* h = r.get<HostMemoryResult>();
    if (!h) return out;
    for (const BandwidthFigure& b : h->figures) {
      Figure f;
      auto id = kFigureIds.find(b.name);
      if (id == kFigureIds.end()) continue;  // no id declared: no figure
      f.id = id->second;
      f.label = "host " + b.name;
      f.value = b.gbps;
      f.unit = "GB/s";
      f.instruction = b.timed_instruction.value_or("");
      f.where = b.where;
      out.push_back(f);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Probe> make_host_memory_probe() { return std::make_unique<HostMemoryProbe>(); }

}  // namespace gd
