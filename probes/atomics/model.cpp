#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "atomics/atomics.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/stats.hpp"

namespace gd {

using nlohmann::json;

// ---- names ----

std::string to_string(PingPong k) {
  switch (k) {
    case PingPong::shared_cas:
      return "shared.cas_pingpong";
    case PingPong::shared_exch:
      return "shared.exch_pingpong";
    case PingPong::global_cas:
      return "global.cas_pingpong";
    case PingPong::global_exch:
      return "global.exch_pingpong";
    case PingPong::global_release_acquire:
      return "global.release_acquire_pingpong";
    case PingPong::host:
      return "host.pingpong";
  }
  return "?";
}

const std::vector<PingPong>& all_ping_pongs() {
  static const std::vector<PingPong> all = {PingPong::shared_cas,
                                            PingPong::shared_exch,
                                            PingPong::global_cas,
                                            PingPong::global_exch,
                                            PingPong::global_release_acquire,
                                            PingPong::host};
  return all;
}

std::string to_string(AtomicSpace s) { return s == AtomicSpace::shared ? "shared" : "global"; }

std::string to_string(AtomicOp o) {
  switch (o) {
    case AtomicOp::add:
      return "add";
    case AtomicOp::min:
      return "min";
    case AtomicOp::max:
      return "max";
    case AtomicOp::cas:
      return "cas";
  }
  return "?";
}

std::string to_string(AtomicType t) {
  switch (t) {
    case AtomicType::i32:
      return "i32";
    case AtomicType::u64:
      return "u64";
    case AtomicType::f32:
      return "f32";
    case AtomicType::f64:
      return "f64";
    case AtomicType::f16x2:
      return "f16x2";
    case AtomicType::bf16x2:
      return "bf16x2";
  }
  return "?";
}

std::string to_string(Contention c) {
  switch (c) {
    case Contention::distinct:
      return "distinct";
    case Contention::bank_conflict:
      return "conflict";
    case Contention::same_per_warp:
      return "same_per_warp";
    case Contention::same_per_block:
      return "same_per_block";
    case Contention::same_gpu:
      return "same_gpu";
  }
  return "?";
}

std::string to_string(AtomicScope s) {
  switch (s) {
    case AtomicScope::cta:
      return "cta";
    case AtomicScope::gpu:
      return "gpu";
    case AtomicScope::sys:
      return "sys";
  }
  return "?";
}

int type_bytes(AtomicType t) { return t == AtomicType::u64 || t == AtomicType::f64 ? 8 : 4; }

std::string ThroughputRequest::key() const {
  // "red" names an add whose result is unused: the instruction the hardware has for it.
  const std::string verb = use_return            ? to_string(op)
                           : op == AtomicOp::add ? "red"
                                                 : "red_" + to_string(op);
  std::string k =
      to_string(space) + "." + verb + "_" + to_string(type) + "." + to_string(contention);
  if (contention == Contention::bank_conflict) k += std::to_string(ways);
  if (space == AtomicSpace::global && scope != AtomicScope::gpu) k += "." + to_string(scope);
  return k;
}

// ---- ping-pong ----

PingPongTiming time_pingpong_on_host(
    const PingPongRequest& r, const std::function<double(uint32_t, PingPongOutcome*)>& play) {
  PingPongRequest one = r;
  one.locations = 1;
  return time_pingpong_on_host(
      one, [&](int, uint32_t rounds, PingPongOutcome* o) { return play(rounds, o); });
}

PingPongTiming time_pingpong_on_host(
    const PingPongRequest& r,
    const std::function<double(int, uint32_t, PingPongOutcome*)>& play_at) {
  PingPongTiming t;
  const uint32_t n = r.round_trips;
  const int locations = std::max(r.locations, 1);
  if (locations > 1) t.ns_by_location.resize(std::size_t(locations));
  bool failed = false;
  auto launch = [&](int loc, uint32_t rounds) {
    const double s = play_at(loc, rounds, failed ? nullptr : &t.outcome);
    if (!failed && !pingpong_check(t.outcome, rounds).empty()) {
      failed = true;  // keep this launch's outcome: the probe reports it
      t.total_round_trips = rounds;
    }
    return s;
  };
  launch(0, std::max<uint32_t>(n / 8, 1));  // warm-up: pipeline or compile caches, wake workers
  for (int rep = 0; rep < r.repeats && !failed; ++rep)
    for (int loc = 0; loc < locations && !failed; ++loc) {
      const double one = launch(loc, n);
      if (failed) break;
      const double two = launch(loc, 2 * n);
      if (failed) break;
      t.total_round_trips = 2 * n;
      const double per = two > one ? (two - one) / (2.0 * n) : two / (4.0 * n);
      t.ns_per_handoff.push_back(per * 1e9);
      if (locations > 1) t.ns_by_location[std::size_t(loc)].push_back(per * 1e9);
    }
  return t;
}

std::string pingpong_check(const PingPongOutcome& o, uint64_t total_round_trips) {
  const uint64_t want = 2 * total_round_trips;
  if (o.timeouts)
    return "a player's spin hit its bound " + std::to_string(o.timeouts) +
           " time(s): the other never answered (no forward progress between the two threads?)";
  if (o.final_value != want)
    return "flag ended at " + std::to_string(o.final_value) + ", expected " + std::to_string(want) +
           " (a hand-over was lost or made twice)";
  if (o.handoffs_a != total_round_trips || o.handoffs_b != total_round_trips)
    return "players counted " + std::to_string(o.handoffs_a) + " and " +
           std::to_string(o.handoffs_b) + " hand-overs, expected " +
           std::to_string(total_round_trips) + " each";
  if (o.payload_errors)
    return std::to_string(o.payload_errors) +
           " payload(s) read behind an acquired flag were stale: release/acquire ordering broken";
  return {};
}

// ---- throughput layouts and checks ----

namespace {
uint64_t region_per_warp(const ThroughputLayout& l) {
  return l.contention == Contention::bank_conflict ? 32ull * uint64_t(std::max(l.ways, 1)) : 32ull;
}

// Threads that share thread g's word (how many atomics hit it per iteration).
uint64_t sharers(const ThroughputLayout& l) {
  switch (l.contention) {
    case Contention::distinct:
    case Contention::bank_conflict:
      return 1;
    case Contention::same_per_warp:
      return 32;
    case Contention::same_per_block:
      return l.threads;
    case Contention::same_gpu:
      return l.space == AtomicSpace::shared ? l.threads : l.blocks * l.threads;
  }
  return 1;
}

}  // namespace

uint64_t shared_words_per_block(const ThroughputLayout& l) {
  return (l.threads / 32) * region_per_warp(l);
}

void time_placements(ThroughputTiming& t, int repeats, int places,
                     const std::function<double(int, int)>& launch) {
  if (places > 1) t.seconds_by_placement.resize(std::size_t(places));
  for (int rep = 0; rep < repeats; ++rep)
    for (int p = 0; p < places; ++p) {
      const double sec = launch(rep, p);
      t.seconds.push_back(sec);
      if (places > 1) t.seconds_by_placement[std::size_t(p)].push_back(sec);
    }
}

uint64_t target_words(const ThroughputLayout& l) {
  if (l.space == AtomicSpace::shared) return l.blocks * shared_words_per_block(l);
  switch (l.contention) {
    case Contention::same_per_block:
      return l.blocks * 32;
    case Contention::same_gpu:
      return 1;
    default:
      return l.blocks * l.threads;
  }
}

uint64_t target_word(const ThroughputLayout& l, uint64_t g) {
  const uint64_t b = g / l.threads, t = g % l.threads, warp = t / 32, lane = t % 32;
  if (l.space == AtomicSpace::shared) {
    const uint64_t base = b * shared_words_per_block(l);
    switch (l.contention) {
      case Contention::distinct:
        return base + warp * 32 + lane;
      case Contention::bank_conflict: {
        // `ways` lanes per bank: lane's bank is lane mod (32/ways), its row lane / (32/ways);
        // rows are 32 words apart, so the lanes of one bank hit distinct words of that bank.
        const uint64_t banks = 32 / uint64_t(std::max(l.ways, 1));
        return base + warp * region_per_warp(l) + (lane % banks) + (lane / banks) * 32;
      }
      case Contention::same_per_warp:
        return base + warp * 32;
      case Contention::same_per_block:
      case Contention::same_gpu:
        return base;
    }
  }
  switch (l.contention) {
    case Contention::same_per_warp:
      return (g / 32) * 32;  // one word per warp, each on its own 128-byte line
    case Contention::same_per_block:
      return b * 32;
    case Contention::same_gpu:
      return 0;
    default:
      return g;
  }
}

uint64_t throughput_groups_per_unit(const ThroughputLayout& l, uint64_t shared_per_unit,
                                    uint64_t min_groups) {
  constexpr uint64_t kFull = 8;
  if (l.space != AtomicSpace::shared) return kFull;
  ThroughputLayout one = l;
  one.blocks = 1;
  const uint64_t bytes = shared_words_per_block(one) * 4 + 1024;
  return std::clamp<uint64_t>(shared_per_unit / bytes, std::min(min_groups, kFull), kFull);
}

uint64_t max_exact_count(AtomicType t) {
  switch (t) {
    case AtomicType::f32:
      return 1ull << 24;
    case AtomicType::f64:
      return 1ull << 53;
    case AtomicType::f16x2:
      return 2048;
    case AtomicType::bf16x2:
      return 256;
    default:
      return std::numeric_limits<uint64_t>::max();
  }
}

uint64_t max_exact_iterations(const ThroughputRequest& r, const ThroughputLayout& l) {
  if (r.op != AtomicOp::add) return std::numeric_limits<uint64_t>::max();
  return max_exact_count(r.type) / std::max<uint64_t>(sharers(l), 1);
}

uint64_t initial_word(const ThroughputRequest& r) {
  if (r.op == AtomicOp::min) return 0x7fffffffu;
  if (r.op == AtomicOp::max) return 0x80000000u;
  return 0;
}

int32_t minmax_operand(AtomicOp op, uint64_t g, uint64_t k, uint64_t /*iterations*/) {
  // Bounded well inside int32: (g mod 977) * 2048 + (k mod 2048) < 2^21.
  const int32_t v = int32_t((g % 977) * 2048 + (k % 2048));
  return op == AtomicOp::min ? -v : v;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(float(man), -24);
  else if (exp == 31)
    v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(float(man | 0x400), int(exp) - 25);
  return sign ? -v : v;
}

float bf16_to_float(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// shape: one exact check per op and type over the same words; split, the cases lose their table
std::string throughput_check(const ThroughputRequest& r, const ThroughputLayout& l,
                             const std::vector<uint64_t>& final_words,
                             const std::vector<uint32_t>& cas_successes) {
  const uint64_t words = target_words(l);
  if (final_words.size() != words)
    return "the backend returned " + std::to_string(final_words.size()) +
           " words, the layout has " + std::to_string(words);
  const uint64_t threads = l.blocks * l.threads;
  if (r.op == AtomicOp::cas && cas_successes.size() != threads)
    return "the backend returned no per-thread CAS success counts";
  // What each word must hold: adds and CAS count hits, min/max keep the extreme operand.
  std::vector<uint64_t> hits(words, 0);
  std::vector<int64_t> extreme(words, r.op == AtomicOp::min ? INT64_MAX : INT64_MIN);
  std::vector<uint8_t> touched(words, 0);
  const uint64_t last_k = l.iterations ? std::min<uint64_t>(l.iterations - 1, 2047) : 0;
  for (uint64_t g = 0; g < threads; ++g) {
    const uint64_t w = target_word(l, g);
    if (w >= words) return "layout maps thread " + std::to_string(g) + " outside the target";
    touched[w] = 1;
    if (r.op == AtomicOp::cas)
      hits[w] += cas_successes[g];
    else
      hits[w] += l.iterations;
    if (r.op == AtomicOp::min || r.op == AtomicOp::max) {
      const int64_t v = minmax_operand(r.op, g, last_k, l.iterations);
      extreme[w] = r.op == AtomicOp::min ? std::min(extreme[w], v) : std::max(extreme[w], v);
    }
    // A CAS loop on a word of its own never fails: every attempt must have succeeded.
    if (r.op == AtomicOp::cas && sharers(l) == 1 && cas_successes[g] != l.iterations)
      return "thread " + std::to_string(g) + " alone on its word counted " +
             std::to_string(cas_successes[g]) + " successful CAS of " +
             std::to_string(l.iterations);
  }
  auto wrong = [&](uint64_t w, const std::string& want, const std::string& got) {
    return "word " + std::to_string(w) + " holds " + got + ", expected " + want +
           " (an atomic was lost or counted twice)";
  };
  const uint64_t init = initial_word(r);
  for (uint64_t w = 0; w < words; ++w) {
    const uint64_t raw = final_words[w];
    if (!touched[w]) {
      if (raw != init) return wrong(w, std::to_string(init) + " (untouched)", std::to_string(raw));
      continue;
    }
    const uint64_t n = hits[w];
    switch (r.op) {
      case AtomicOp::min:
      case AtomicOp::max: {
        const int32_t got = int32_t(uint32_t(raw));
        if (got != extreme[w]) return wrong(w, std::to_string(extreme[w]), std::to_string(got));
        break;
      }
      case AtomicOp::cas:
        if (uint32_t(raw) != uint32_t(init + n))
          return wrong(w, std::to_string(uint32_t(init + n)), std::to_string(uint32_t(raw)));
        break;
      case AtomicOp::add:
        switch (r.type) {
          case AtomicType::i32:
            if (uint32_t(raw) != uint32_t(n))
              return wrong(w, std::to_string(uint32_t(n)), std::to_string(uint32_t(raw)));
            break;
          case AtomicType::u64:
            if (raw != n) return wrong(w, std::to_string(n), std::to_string(raw));
            break;
          case AtomicType::f32:
            if (uint32_t(raw) != std::bit_cast<uint32_t>(float(n))) {
              float got;
              const uint32_t bits = uint32_t(raw);
              std::memcpy(&got, &bits, 4);
              return wrong(w, std::to_string(n), std::to_string(got));
            }
            break;
          case AtomicType::f64: {
            double got;
            std::memcpy(&got, &raw, 8);
            if (got != double(n)) return wrong(w, std::to_string(n), std::to_string(got));
            break;
          }
          case AtomicType::f16x2:
          case AtomicType::bf16x2: {
            const bool half = r.type == AtomicType::f16x2;
            const uint16_t lo = uint16_t(raw & 0xffff), hi = uint16_t((raw >> 16) & 0xffff);
            const float flo = half ? half_to_float(lo) : bf16_to_float(lo);
            const float fhi = half ? half_to_float(hi) : bf16_to_float(hi);
            if (flo != float(n) || fhi != float(n))
              return wrong(w, std::to_string(n) + " in both halves",
                           std::to_string(flo) + ", " + std::to_string(fhi));
            break;
          }
        }
        break;
    }
  }
  return {};
}

std::string atomic_listing(const KernelMemoryOps& ops, const std::string& what) {
  if (ops.atomic_all.empty()) return {};
  if (what.find("release_acquire") != std::string::npos) return ops.load + " + " + ops.store;
  if (what.rfind("pingpong.", 0) != 0) return ops.atomic_all;
  // The game's own atomic: the first of its kind (a kernel may also count with an add).
  const std::string kind = what.find("exch") != std::string::npos ? "EXCH" : "CAS";
  std::string first = ops.atomic_all.substr(0, ops.atomic_all.find(" + "));
  for (std::size_t at = 0; at < ops.atomic_all.size();) {
    const std::size_t end = std::min(ops.atomic_all.find(" + ", at), ops.atomic_all.size());
    const std::string one = ops.atomic_all.substr(at, end - at);
    if (one.find(kind) != std::string::npos) {
      first = one;
      break;
    }
    at = end + 3;
  }
  return kind == "EXCH" ? ops.load + " + " + first : first;
}

}  // namespace gd
