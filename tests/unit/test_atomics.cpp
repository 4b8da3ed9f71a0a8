// The atomics probe without a GPU: the exact host checks catch a lost or doubled update,
// the tournament schedule meets every pair once, the SM matrix summary finds a known
// structure, options are validated, the JSON round-trips, and run_atomics records
// unsupported parts, failed checks and backend errors as it should.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "atomics/report.hpp"
#include "atomics/run.hpp"
#include "fake_device.hpp"
#include "figure_ids_check.hpp"
#include "gpudissect/probe.hpp"  // ProbeError

namespace gd {
namespace {

// ---- ping-pong check ----

PingPongOutcome good_outcome(uint64_t rounds) {
  PingPongOutcome o;
  o.final_value = 2 * rounds;
  o.handoffs_a = o.handoffs_b = rounds;
  return o;
}

TEST(AtomicsCheck, PingPongExactOutcomePasses) {
  EXPECT_EQ(pingpong_check(good_outcome(1000), 1000), "");
}

TEST(AtomicsCheck, PingPongLostOrDoubledHandoverFails) {
  PingPongOutcome lost = good_outcome(1000);
  lost.final_value -= 1;
  EXPECT_NE(pingpong_check(lost, 1000), "");
  PingPongOutcome doubled = good_outcome(1000);
  doubled.handoffs_b += 1;
  EXPECT_NE(pingpong_check(doubled, 1000), "");
  PingPongOutcome timeout = good_outcome(1000);
  timeout.timeouts = 1;
  EXPECT_NE(pingpong_check(timeout, 1000).find("bound"), std::string::npos);
  PingPongOutcome stale = good_outcome(1000);
  stale.payload_errors = 3;
  EXPECT_NE(pingpong_check(stale, 1000).find("stale"), std::string::npos);
}

// ---- throughput check: simulate what correct atomics leave, then break it ----

uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The memory correct atomics leave (adds of 1, min/max of minmax_operand, CAS counting
// each thread's `iterations` attempts as successes where it is alone on its word).
std::vector<uint64_t> simulate(const ThroughputRequest& r, const ThroughputLayout& l) {
  std::vector<uint64_t> w(target_words(l), initial_word(r));
  std::vector<double> sum(w.size(), 0);
  std::vector<uint8_t> hit(w.size(), 0);
  for (uint64_t g = 0; g < l.blocks * l.threads; ++g) {
    const uint64_t t = target_word(l, g);
    hit[t] = 1;
    for (uint64_t k = 0; k < l.iterations; ++k) {
      if (r.op == AtomicOp::min)
        w[t] =
            uint32_t(std::min(int32_t(uint32_t(w[t])), minmax_operand(r.op, g, k, l.iterations)));
      else if (r.op == AtomicOp::max)
        w[t] =
            uint32_t(std::max(int32_t(uint32_t(w[t])), minmax_operand(r.op, g, k, l.iterations)));
      else
        sum[t] += 1;
    }
  }
  if (r.op == AtomicOp::add || r.op == AtomicOp::cas)
    for (std::size_t i = 0; i < w.size(); ++i) {
      const uint64_t n = uint64_t(sum[i]);
      switch (r.type) {
        case AtomicType::f32:
          w[i] = f32_bits(float(n));
          break;
        case AtomicType::f16x2: {
          // n < 2048: exactly representable; build the half by hand.
          uint16_t h = 0;
          if (n) {
            int e = 0;
            while ((n >> e) > 1) ++e;
            h = uint16_t(((e + 15) << 10) | ((n << (10 - e)) & 0x3ff));
          }
          w[i] = uint64_t(h) | (uint64_t(h) << 16);
          break;
        }
        case AtomicType::f64: {
          const double d = double(n);
          std::memcpy(&w[i], &d, 8);
          break;
        }
        default:
          w[i] = r.type == AtomicType::i32 ? uint32_t(n) : n;
      }
    }
  return w;
}

ThroughputLayout small_layout(AtomicSpace s, Contention c, int ways = 1) {
  ThroughputLayout l;
  l.space = s;
  l.contention = c;
  l.ways = ways;
  l.blocks = 3;
  l.threads = 64;
  l.iterations = 10;
  return l;
}

TEST(AtomicsCheck, ThroughputCorrectMemoryPassesLostAndDoubledFail) {
  for (AtomicSpace s : {AtomicSpace::shared, AtomicSpace::global})
    for (Contention c : {Contention::distinct, Contention::bank_conflict, Contention::same_per_warp,
                         Contention::same_per_block, Contention::same_gpu}) {
      ThroughputRequest r;
      r.space = s;
      r.contention = c;
      const ThroughputLayout l = small_layout(s, c, c == Contention::bank_conflict ? 8 : 1);
      std::vector<uint64_t> w = simulate(r, l);
      EXPECT_EQ(throughput_check(r, l, w, {}), "") << r.key();
      const uint64_t hot = target_word(l, 5);
      w[hot] -= 1;  // one atomic lost
      EXPECT_NE(throughput_check(r, l, w, {}), "") << r.key();
      w[hot] += 2;  // one counted twice
      EXPECT_NE(throughput_check(r, l, w, {}), "") << r.key();
    }
}

TEST(AtomicsCheck, UntouchedWordMustStayAtItsInitialValue) {
  ThroughputRequest r;
  r.space = AtomicSpace::shared;
  r.contention = Contention::bank_conflict;
  r.ways = 4;
  const ThroughputLayout l = small_layout(AtomicSpace::shared, Contention::bank_conflict, 4);
  std::vector<uint64_t> w = simulate(r, l);
  // Word 32 is in row 1 of the first warp's region at bank 0: with 4 ways (8 banks) lane 8
  // hits it. Word 40 (row 1, bank 8) nobody touches: a stray atomic there is caught.
  w[40] += 1;
  EXPECT_NE(throughput_check(r, l, w, {}), "");
}

TEST(AtomicsCheck, BankConflictLayoutPutsWaysLanesInOneBank) {
  for (int ways : {1, 2, 4, 8, 16, 32}) {
    ThroughputLayout l = small_layout(AtomicSpace::shared, Contention::bank_conflict, ways);
    std::map<uint64_t, std::set<uint64_t>> bank_words;
    for (uint64_t lane = 0; lane < 32; ++lane) {
      const uint64_t w = target_word(l, lane);
      bank_words[w % 32].insert(w);
    }
    EXPECT_EQ(bank_words.size(), 32u / ways) << ways;
    for (const auto& [bank, words] : bank_words) EXPECT_EQ(words.size(), size_t(ways)) << ways;
  }
}

TEST(AtomicsCheck, FloatAddsAreExactOnRepresentableCounts) {
  ThroughputRequest r;
  r.type = AtomicType::f32;
  r.contention = Contention::same_per_warp;
  const ThroughputLayout l = small_layout(AtomicSpace::global, Contention::same_per_warp);
  std::vector<uint64_t> w = simulate(r, l);
  EXPECT_EQ(throughput_check(r, l, w, {}), "");
  w[0] = f32_bits(float(32 * 10 - 1));
  EXPECT_NE(throughput_check(r, l, w, {}), "");
  // f16: the layout's iterations stay within 2048 per word.
  ThroughputRequest h;
  h.type = AtomicType::f16x2;
  ThroughputLayout hl = small_layout(AtomicSpace::global, Contention::distinct);
  EXPECT_EQ(max_exact_iterations(h, hl), 2048u);
  hl.iterations = 1000;
  std::vector<uint64_t> hw = simulate(h, hl);
  EXPECT_EQ(throughput_check(h, hl, hw, {}), "");
  hw[7] ^= 1u << 16;  // the high half off by one ulp
  EXPECT_NE(throughput_check(h, hl, hw, {}), "");
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(max_exact_iterations(r, l), (1u << 24) / 32);
}

TEST(AtomicsCheck, MinMaxKeepTheExtreme) {
  for (AtomicOp op : {AtomicOp::min, AtomicOp::max}) {
    ThroughputRequest r;
    r.op = op;
    r.contention = Contention::same_per_block;
    const ThroughputLayout l = small_layout(AtomicSpace::global, Contention::same_per_block);
    std::vector<uint64_t> w = simulate(r, l);
    EXPECT_EQ(throughput_check(r, l, w, {}), "") << to_string(op);
    w[32] = uint32_t(int32_t(uint32_t(w[32])) + (op == AtomicOp::max ? -1 : 1));
    EXPECT_NE(throughput_check(r, l, w, {}), "") << to_string(op);
  }
}

TEST(AtomicsCheck, CasCountsMustMatchSuccesses) {
  ThroughputRequest r;
  r.op = AtomicOp::cas;
  const ThroughputLayout l = small_layout(AtomicSpace::global, Contention::distinct);
  std::vector<uint32_t> succ(l.blocks * l.threads, uint32_t(l.iterations));
  std::vector<uint64_t> w = simulate(r, l);
  EXPECT_EQ(throughput_check(r, l, w, succ), "");
  EXPECT_NE(throughput_check(r, l, w, {}), "");  // counts missing
  succ[3] -= 1;                                  // alone on its word, a CAS cannot fail
  EXPECT_NE(throughput_check(r, l, w, succ), "");
  // Contended: the word holds the sum of its threads' successes, whatever they were.
  ThroughputRequest c = r;
  c.contention = Contention::same_per_warp;
  const ThroughputLayout cl = small_layout(AtomicSpace::global, Contention::same_per_warp);
  std::vector<uint32_t> won(cl.blocks * cl.threads, 1);
  std::vector<uint64_t> cw(target_words(cl), 0);
  for (uint64_t g = 0; g < won.size(); ++g) cw[target_word(cl, g)] += won[g];
  EXPECT_EQ(throughput_check(c, cl, cw, won), "");
  won[0] = 2;
  EXPECT_NE(throughput_check(c, cl, cw, won), "");
}

TEST(AtomicsCheck, KeysAreStable) {
  ThroughputRequest r;
  EXPECT_EQ(r.key(), "global.add_i32.distinct");
  r.use_return = false;
  EXPECT_EQ(r.key(), "global.red_i32.distinct");
  r.use_return = true;
  r.scope = AtomicScope::cta;
  EXPECT_EQ(r.key(), "global.add_i32.distinct.cta");
  r.space = AtomicSpace::shared;
  r.contention = Contention::bank_conflict;
  r.ways = 4;
  EXPECT_EQ(r.key(), "shared.add_i32.conflict4");
  r.contention = Contention::same_per_warp;
  r.type = AtomicType::f32;
  r.space = AtomicSpace::global;
  r.scope = AtomicScope::gpu;
  EXPECT_EQ(r.key(), "global.add_f32.same_per_warp");
}

// ---- tournament ----

void expect_tournament(int n) {
  const auto rounds = round_robin_rounds(n);
  EXPECT_EQ(rounds.size(), size_t(n % 2 ? n : n - 1)) << n;
  std::set<std::pair<int, int>> seen;
  for (const auto& round : rounds) {
    EXPECT_EQ(round.size(), size_t(n / 2)) << n;
    std::set<int> busy;
    for (auto [a, b] : round) {
      EXPECT_LT(a, b);
      EXPECT_GE(a, 0);
      EXPECT_LT(b, n);
      EXPECT_TRUE(busy.insert(a).second) << "SM " << a << " twice in a round";
      EXPECT_TRUE(busy.insert(b).second) << "SM " << b << " twice in a round";
      EXPECT_TRUE(seen.insert({a, b}).second) << a << "-" << b << " met twice";
    }
  }
  EXPECT_EQ(seen.size(), size_t(n * (n - 1) / 2)) << n;
}

TEST(AtomicsMatrix, RoundRobinMeetsEveryPairOnce) {
  for (int n : {2, 3, 4, 7, 16, 132}) expect_tournament(n);
  EXPECT_TRUE(round_robin_rounds(1).empty());
}

// ---- a fake device ----

// Pair latency with a known structure: SMs in two partitions (SM i in partition (i / 2) % 2,
// interleaved like real SM numbering may be), 300 cycles within, 500 between, +-4 noise.
double fake_pair_cycles(int a, int b, int segment) {
  const bool same = (a / 2) % 2 == (b / 2) % 2;
  const double noise = double((a * 7 + b * 13 + segment * 5) % 9) - 4;
  return (same ? 300 : 500) + noise;
}

class FakeAtomics final : public AtomicsKernels {
 public:
  bool structured = true;
  bool lose_an_update = false;   // the throughput kernels "lose" one atomic
  bool fail_throughput = false;  // the backend throws on the first throughput call
  bool lose_a_matrix_handover = false;
  // Honour locations and placements as the CUDA backend does: location i adds 10 i cycles,
  // placement p makes a launch take 1 + p/10 ms. Off: one placement, as OpenCL.
  bool placed = false;
  std::atomic<bool>* stop_after_latency = nullptr;
  // The SM clock the latency and throughput kernels report, and the highest clock seen on
  // the device where the backend tracks one (Vulkan).
  double clock = 1500;
  std::optional<double> clock_peak;
  std::map<std::string, PingPongRequest> pingpong_requests;
  std::map<std::string, ThroughputRequest> throughput_requests;

  bool has_clock() const override { return true; }
  Support supports(PingPong kind) const override {
    if (kind == PingPong::host) return Support::no("no mapped memory on the fake");
    return Support::yes();
  }
  PingPongTiming ping_pong(const PingPongRequest& r) override {
    pingpong_requests[to_string(r.kind)] = r;
    PingPongTiming t;
    if (placed && r.locations > 1) {
      t.cycles_by_location.resize(r.locations);
      t.ns_by_location.resize(r.locations);
      for (int i = 0; i < r.repeats; ++i)
        for (int loc = 0; loc < r.locations; ++loc) {
          const double c = kind_cycles(r.kind) + 10.0 * loc + (i == 0 ? 1000 : 0);
          t.cycles_by_location[loc].push_back(c);
          t.ns_by_location[loc].push_back(c / 1.5);
          t.cycles_per_handoff.push_back(c);
          t.ns_per_handoff.push_back(c / 1.5);
        }
    } else {
      for (int i = 0; i < r.repeats; ++i) {
        t.cycles_per_handoff.push_back(kind_cycles(r.kind));
        t.ns_per_handoff.push_back(kind_cycles(r.kind) / 1.5);
      }
    }
    t.clock_mhz = clock;
    t.clock_peak_mhz = clock_peak;
    t.total_round_trips = uint64_t(r.round_trips) * r.repeats;
    t.outcome = good_outcome(t.total_round_trips);
    if (r.kind == PingPong::global_release_acquire && stop_after_latency)
      *stop_after_latency = true;
    return t;
  }
  Support supports(const ThroughputRequest& r) const override {
    if (r.type == AtomicType::bf16x2) return Support::no("no bf16 atomics on the fake");
    return Support::yes();
  }
  ThroughputTiming throughput(const ThroughputRequest& r) override {
    if (fail_throughput) throw BackendError("illegal address (fake)");
    ThroughputTiming t;
    t.layout.space = r.space;
    t.layout.contention = r.contention;
    t.layout.ways = r.ways;
    t.layout.blocks = 8;
    t.layout.threads = 64;
    t.layout.iterations = std::min<uint64_t>(20, max_exact_iterations(r, t.layout));
    std::vector<uint64_t> w = simulate(r, t.layout);
    std::vector<uint32_t> succ(t.layout.blocks * t.layout.threads, uint32_t(t.layout.iterations));
    if (r.op == AtomicOp::cas && r.contention != Contention::distinct &&
        r.contention != Contention::bank_conflict) {
      // Contended CAS: say every thread won once per iteration; the words agree.
      std::fill(w.begin(), w.end(), 0);
      for (uint64_t g = 0; g < succ.size(); ++g) w[target_word(t.layout, g)] += succ[g];
    }
    if (lose_an_update && r.op == AtomicOp::add && r.type == AtomicType::i32) w[0] -= 1;
    throughput_requests[r.key()] = r;
    if (placed && r.placements > 1) {
      t.seconds_by_placement.resize(r.placements);
      for (int i = 0; i < r.repeats; ++i)
        for (int p = 0; p < r.placements; ++p) {
          // The first repeat of each placement is an outlier its median must drop.
          const double sec = 1e-3 * (1 + 0.1 * p) * (i == 0 ? 3 : 1);
          t.seconds_by_placement[p].push_back(sec);
          t.seconds.push_back(sec);
          t.clock_mhz.push_back(clock);
        }
    } else {
      for (int i = 0; i < r.repeats; ++i) {
        t.seconds.push_back(1e-3);
        t.clock_mhz.push_back(clock);
      }
    }
    t.sms = 4;
    t.clock_peak_mhz = clock_peak;
    t.check_error = throughput_check(r, t.layout, w, succ);
    return t;
  }
  Support supports_matrix() const override { return Support::yes(); }
  MatrixTiming sm_matrix(const MatrixRequest& r) override {
    last_matrix = r;
    MatrixTiming t;
    t.sms = r.sms;
    t.round_trips_per_pair = r.warmup_round_trips + uint64_t(r.round_trips) * r.segments;
    for (const auto& round : round_robin_rounds(r.sms))
      for (auto [a, b] : round) {
        PairSample p;
        p.a = a;
        p.b = b;
        for (int s = 0; s < r.segments; ++s) {
          const double c = structured ? fake_pair_cycles(a, b, s) : 400 + (a + b + s) % 5;
          p.cycles_per_handoff.push_back(c);
          p.ns_per_handoff.push_back(c / 1.5);
        }
        p.outcome = good_outcome(t.round_trips_per_pair);
        if (lose_a_matrix_handover && a == 1 && b == 2) p.outcome.final_value -= 1;
        t.pairs.push_back(std::move(p));
      }
    t.clock_mhz = 1500;
    return t;
  }
  std::optional<std::string> instruction(const std::string& what) override {
    if (what == "global.add_i32.same_per_warp") return "REDUX.SUM + ATOMG.E.ADD.STRONG.GPU";
    if (what == "pingpong.shared.cas_pingpong") return "ATOMS.CAS";
    if (what.rfind("shared.", 0) == 0) return "ATOMS.ADD";
    return std::nullopt;
  }
  MatrixRequest last_matrix;

 private:
  static double kind_cycles(PingPong k) {
    return k == PingPong::shared_cas || k == PingPong::shared_exch ? 60 : 700;
  }
};

class FakeDevice final : public fakes::FakeDevice {
 public:
  explicit FakeDevice(bool with_kernels, int sms = 16) {
    info_.backend = "cuda";
    info_.id = "cuda:0";
    info_.name = "Fake GPU";
    info_.compute_units = sms;
    if (with_kernels) serve(AtomicsKernels::kProbe, &atomics);
  }
  FakeAtomics atomics;
};

// ---- the matrix summary ----

TEST(AtomicsMatrix, SummaryFindsTheTwoPartitions) {
  FakeDevice dev(true, 16);
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  run_atomics(dev, parse_atomics_options({{"parts", "matrix"}}), progress, stop, out);
  ASSERT_TRUE(out.matrix);
  const SmMatrix& m = *out.matrix;
  ASSERT_TRUE(m.status.ok()) << m.status.reason;
  EXPECT_EQ(m.unit, "cycles");
  ASSERT_EQ(m.values.size(), 16u);
  EXPECT_TRUE(std::isnan(m.values[3][3]));
  EXPECT_DOUBLE_EQ(m.values[0][1], m.values[1][0]);
  EXPECT_NEAR(m.values[0][1], 300, 4.01);
  EXPECT_NEAR(m.values[0][2], 500, 4.01);
  // Each cell is the median of its pair's 4 segments.
  EXPECT_GE(m.summary.all.min, 296);
  EXPECT_LE(m.summary.all.min, 304);
  EXPECT_GE(m.summary.all.max, 496);
  EXPECT_LE(m.summary.all.max, 504);
  ASSERT_EQ(m.summary.clusters.size(), 2u) << m.summary.structure;
  const std::vector<int> even = {0, 1, 4, 5, 8, 9, 12, 13}, odd = {2, 3, 6, 7, 10, 11, 14, 15};
  EXPECT_EQ(m.summary.clusters[0].sms, even);
  EXPECT_EQ(m.summary.clusters[1].sms, odd);
  EXPECT_NEAR(m.summary.clusters[0].median_within, 300, 4.01);
  ASSERT_EQ(m.summary.between.size(), 4u);
  EXPECT_NEAR(m.summary.between[1], 500, 4.01);
  EXPECT_NE(m.summary.structure.find("2 groups"), std::string::npos) << m.summary.structure;
  EXPECT_EQ(m.round_trips_per_pair, 8u + 64 * 4);
}

TEST(AtomicsMatrix, NoStructureIsOneCluster) {
  FakeDevice dev(true, 12);
  dev.atomics.structured = false;
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  run_atomics(dev, parse_atomics_options({{"parts", "matrix"}}), progress, stop, out);
  ASSERT_TRUE(out.matrix);
  EXPECT_EQ(out.matrix->summary.clusters.size(), 1u) << out.matrix->summary.structure;
  EXPECT_NE(out.matrix->summary.structure.find("no structure"), std::string::npos);
}

// matrix_max_sms cuts the matrix; quick does not (the minimum over fewer SMs is another
// figure, and every SM's matrix takes tens of milliseconds).
TEST(AtomicsMatrix, MaxSmsCutsTheMatrixQuickDoesNot) {
  FakeDevice dev(true, 40);
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  run_atomics(dev, parse_atomics_options({{"parts", "matrix"}, {"matrix_max_sms", "6"}}), progress,
              stop, out);
  EXPECT_EQ(dev.atomics.last_matrix.sms, 6);
  AtomicsProbeResult quick;
  run_atomics(dev, parse_atomics_options({{"parts", "matrix"}, {"quick", "1"}}), progress, stop,
              quick);
  EXPECT_EQ(dev.atomics.last_matrix.sms, 40);
}

TEST(AtomicsMatrix, ALostHandoverMarksTheMatrix) {
  FakeDevice dev(true, 8);
  dev.atomics.lose_a_matrix_handover = true;
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  run_atomics(dev, parse_atomics_options({{"parts", "matrix"}}), progress, stop, out);
  ASSERT_TRUE(out.matrix);
  EXPECT_EQ(out.matrix->status.name(), "error");
  EXPECT_NE(out.matrix->status.reason.find("SMs 1 and 2"), std::string::npos);
  EXPECT_TRUE(std::isnan(out.matrix->values[1][2]));
  EXPECT_FALSE(std::isnan(out.matrix->values[0][1]));
  EXPECT_EQ(out.status.name(), "error");
}

// ---- run_atomics ----

TEST(AtomicsProbe, NoKernelSetIsUnsupportedWithReason) {
  FakeDevice dev(false);
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  run_atomics(dev, AtomicsOptions{}, progress, stop, out);
  EXPECT_EQ(out.status.name(), "unsupported");
  EXPECT_NE(out.status.reason.find("no atomics kernels"), std::string::npos);
}

TEST(AtomicsProbe, FullRunOnTheFake) {
  FakeDevice dev(true, 4);
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  run_atomics(dev, AtomicsOptions{}, progress, stop, out);
  EXPECT_TRUE(out.status.ok()) << out.status.reason;
  ASSERT_TRUE(out.clock_mhz_measured);
  EXPECT_DOUBLE_EQ(*out.clock_mhz_measured, 1500);
  EXPECT_EQ(out.latency.at("host.pingpong").status.name(), "unsupported");
  EXPECT_EQ(out.latency.at("host.pingpong").status.reason, "no mapped memory on the fake");
  const AtomicLatency& cas = out.latency.at("shared.cas_pingpong");
  ASSERT_TRUE(cas.cycles);
  EXPECT_DOUBLE_EQ(cas.cycles->median, 60);
  EXPECT_EQ(cas.instruction, std::optional<std::string>("ATOMS.CAS"));
  EXPECT_EQ(out.throughput.at("shared.add_i32.distinct").instruction,
            std::optional<std::string>("ATOMS.ADD"));
  EXPECT_EQ(out.throughput.at("global.add_bf16x2.distinct").status.name(), "unsupported");
  const AtomicThroughput& t = out.throughput.at("global.add_i32.distinct");
  ASSERT_TRUE(t.status.ok()) << t.status.reason;
  // 8 x 64 threads x 20 atomics in 1 ms at 1500 MHz on 4 SMs.
  EXPECT_EQ(t.ops_per_launch, 8u * 64 * 20);
  ASSERT_TRUE(t.gops && t.ops_per_clk_sm);
  EXPECT_NEAR(t.gops->median, 10240 / 1e-3 / 1e9, 1e-12);
  EXPECT_NEAR(t.ops_per_clk_sm->median, 10240 / 1e-3 / 1500e6 / 4, 1e-12);
  // The SASS note: the compiler folded the warp's atomics, the figure still counts threads.
  EXPECT_NE(out.throughput.at("global.add_i32.same_per_warp").note.find("thread-level"),
            std::string::npos);
  EXPECT_GT(out.throughput.size(), 20u);
}

// A backend that tracks the highest clock seen (Vulkan): figures measured below 80 % of it
// say the GPU clock was low (the H200 through NVIDIA's Vulkan driver sat at 345 MHz of 1980
// through the first run's atomics); at the highest clock, nothing is said.
TEST(AtomicsProbe, LowClockIsNoted) {
  FakeDevice dev(true, 4);
  dev.atomics.clock = 345;
  dev.atomics.clock_peak = 1980;
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  AtomicsOptions opt;
  opt.quick = true;
  opt.matrix = false;
  run_atomics(dev, opt, progress, stop, out);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  const AtomicThroughput& t = out.throughput.at("global.add_i32.distinct");
  EXPECT_NE(t.note.find("GPU clock low: 345 MHz"), std::string::npos) << t.note;
  ASSERT_TRUE(t.ops_per_clk_sm);  // per clock at the clock seen
  EXPECT_NEAR(t.ops_per_clk_sm->median, 10240 / 1e-3 / 345e6 / 4, 1e-12);
  // The SASS note stays, the clock's follows it.
  const std::string& folded = out.throughput.at("global.add_i32.same_per_warp").note;
  EXPECT_EQ(folded.find("the SASS folds"), 0u) << folded;
  EXPECT_NE(folded.find("; GPU clock low"), std::string::npos) << folded;
  EXPECT_NE(out.latency.at("global.cas_pingpong").note.find("GPU clock low"), std::string::npos)
      << out.latency.at("global.cas_pingpong").note;
  EXPECT_NE(out.latency.at("shared.cas_pingpong").note.find("GPU clock low"), std::string::npos);

  FakeDevice high(true, 4);
  high.atomics.clock = 1980;
  high.atomics.clock_peak = 1980;
  AtomicsProbeResult fine;
  run_atomics(high, opt, progress, stop, fine);
  for (const auto& [key, f] : fine.throughput)
    EXPECT_EQ(f.note.find("GPU clock low"), std::string::npos) << key;
  for (const auto& [key, l] : fine.latency)
    EXPECT_EQ(l.note.find("GPU clock low"), std::string::npos) << key;
}

TEST(AtomicsProbe, LostUpdateIsAnErrorNotAFigure) {
  FakeDevice dev(true, 4);
  dev.atomics.lose_an_update = true;
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  run_atomics(dev, parse_atomics_options({{"matrix", "0"}}), progress, stop, out);
  const AtomicThroughput& t = out.throughput.at("global.add_i32.distinct");
  EXPECT_EQ(t.status.name(), "error");
  EXPECT_NE(t.status.reason.find("lost"), std::string::npos) << t.status.reason;
  EXPECT_FALSE(t.gops);
  EXPECT_TRUE(out.throughput.at("global.add_f32.same_per_warp").status.ok());
  EXPECT_EQ(out.status.name(), "error");
  EXPECT_FALSE(out.matrix);
}

TEST(AtomicsProbe, BackendErrorKeepsWhatWasMeasured) {
  FakeDevice dev(true, 4);
  dev.atomics.fail_throughput = true;
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  EXPECT_THROW(run_atomics(dev, parse_atomics_options({{"matrix", "0"}}), progress, stop, out),
               ProbeError);
  EXPECT_EQ(out.status.name(), "error");
  EXPECT_NE(out.status.reason.find("shared.add_i32.distinct"), std::string::npos);
  EXPECT_TRUE(out.latency.at("global.cas_pingpong").status.ok());
  EXPECT_EQ(out.throughput.at("shared.add_i32.distinct").status.name(), "error");
  EXPECT_GT(out.wall_seconds, 0);
}

TEST(AtomicsProbe, StopIsInterruptedAndKeepsResults) {
  FakeDevice dev(true, 4);
  std::atomic<bool> stop{false};
  dev.atomics.stop_after_latency = &stop;
  NullProgress progress;
  AtomicsProbeResult out;
  run_atomics(dev, AtomicsOptions{}, progress, stop, out);
  EXPECT_EQ(out.status.name(), "interrupted");
  EXPECT_TRUE(out.latency.at("global.release_acquire_pingpong").status.ok());
  EXPECT_TRUE(out.throughput.empty());
}

// ---- options ----

TEST(AtomicsPlacements, OnePlacementIsTheSummaryOfItsRepeats) {
  const auto f = summarize_placed({{}, {1, 2, 3, 100}, {}});
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->spread);
  EXPECT_DOUBLE_EQ(f->summary.median, 2.5);
  EXPECT_EQ(f->summary.n, 4u);
  EXPECT_FALSE(summarize_placed({}));
  EXPECT_FALSE(summarize_placed({{}, {}}));
}

TEST(AtomicsPlacements, FigureIsTheMeanOverPlacementsPerRepeat) {
  // Three near placements and one far: the median over placements (and over all samples
  // pooled) is 100, which flips to 200 when a run draws one more far placement; the mean,
  // 125, moves by a quarter of the gap. Each repeat's mean over placements: 125, 125,
  // 125.5; the empty placement is dropped.
  const auto f =
      summarize_placed({{100, 101, 100}, {100, 100, 102}, {}, {200, 200, 200}, {100, 99, 100}});
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->spread);
  const PlacementSpread& s = *f->spread;
  EXPECT_EQ(s.values, (std::vector<double>{100, 100, 200, 100}));
  EXPECT_DOUBLE_EQ(f->summary.median, 125);
  EXPECT_EQ(f->summary.n, 3u);  // the quartiles are over repeats
  EXPECT_DOUBLE_EQ(f->summary.max, 125.5);
  EXPECT_DOUBLE_EQ(s.mean, 125);
  EXPECT_DOUBLE_EQ(s.median, 100);
  EXPECT_DOUBLE_EQ(s.min, 100);
  EXPECT_DOUBLE_EQ(s.max, 200);
  EXPECT_DOUBLE_EQ(s.repeat_spread, 0.01 / 2);  // relative IQRs 0.005, 0.01, 0, 0.005
  EXPECT_NEAR(s.relative_range(), 100.0 / 125, 1e-12);
}

TEST(AtomicsPlacements, ProbeAsksForLocationsAndPlacementsAndAveragesThem) {
  FakeDevice dev(true, 4);
  dev.atomics.placed = true;
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  AtomicsOptions opt;  // 16 locations, 2000 round trips, 5 repeats
  opt.placements = 4;
  run_atomics(dev, opt, progress, stop, out);
  EXPECT_TRUE(out.status.ok()) << out.status.reason;
  // Global ping-pongs: 16 locations, 1/8 of the round trips each; shared ones: one.
  const PingPongRequest& gr = dev.atomics.pingpong_requests.at("global.cas_pingpong");
  EXPECT_EQ(gr.locations, 16);
  EXPECT_EQ(gr.round_trips, 250u);
  EXPECT_EQ(dev.atomics.pingpong_requests.at("shared.cas_pingpong").locations, 1);
  EXPECT_EQ(dev.atomics.pingpong_requests.at("shared.cas_pingpong").round_trips, 2000u);
  const AtomicLatency& g = out.latency.at("global.cas_pingpong");
  ASSERT_TRUE(g.status.ok()) << g.status.reason;
  EXPECT_EQ(g.locations, 16);
  EXPECT_EQ(g.round_trips, 250u);
  ASSERT_TRUE(g.cycles && g.placement_cycles && g.placement_ns);
  // Locations at base + 0, 10, ..., 150: median 75 above the base, the outlier repeat gone.
  const double base = g.placement_cycles->min;
  EXPECT_DOUBLE_EQ(g.placement_cycles->max - base, 150);
  EXPECT_DOUBLE_EQ(g.cycles->median, base + 75);
  EXPECT_DOUBLE_EQ(g.ns->median, (base + 75) / 1.5);
  EXPECT_EQ(g.placement_cycles->values.size(), 16u);
  EXPECT_NE(g.note.find("16 flag locations"), std::string::npos) << g.note;
  const AtomicLatency& sh = out.latency.at("shared.cas_pingpong");
  EXPECT_EQ(sh.locations, 1);
  EXPECT_FALSE(sh.placement_cycles);
  // Throughput: global requests get the placements asked for, shared ones none.
  EXPECT_EQ(dev.atomics.throughput_requests.at("global.add_i32.distinct").placements, 4);
  EXPECT_EQ(dev.atomics.throughput_requests.at("shared.add_i32.distinct").placements, 1);
  const AtomicThroughput& t = out.throughput.at("global.add_i32.distinct");
  ASSERT_TRUE(t.status.ok()) << t.status.reason;
  EXPECT_EQ(t.placements, 4);
  ASSERT_TRUE(t.gops && t.placement_gops && t.ops_per_clk_sm);
  // Placements take 1.0, 1.1, 1.2, 1.3 ms (3x in the first repeat): the figure is the
  // median over repeats of the mean of their rates.
  const double ops = double(t.ops_per_launch);
  const double want = (ops / 1e-3 + ops / 1.1e-3 + ops / 1.2e-3 + ops / 1.3e-3) / 4 / 1e9;
  EXPECT_NEAR(t.gops->median, want, 1e-9);
  EXPECT_NEAR(t.placement_gops->max, ops / 1e-3 / 1e9, 1e-9);
  EXPECT_NEAR(t.placement_gops->min, ops / 1.3e-3 / 1e9, 1e-9);
  EXPECT_NEAR(t.ops_per_clk_sm->median, want * 1e9 / 1500e6 / 4, 1e-12);
  EXPECT_FALSE(out.throughput.at("shared.add_i32.distinct").placement_gops);
  // The report shows the spread beside the figure.
  DeviceInfo info;
  info.compute_units = 4;
  std::ostringstream term;
  report::print_atomics_summary(term, out, info);
  EXPECT_NE(term.str().find("over 4 target placements"), std::string::npos) << term.str();
  EXPECT_NE(term.str().find("over 16 flag locations"), std::string::npos) << term.str();
  report::SectionContext ctx;
  const std::string html = report::atomics_html_section(out, info, ctx);
  EXPECT_NE(html.find("over 4 target placements"), std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / "gd_atomics_placement_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  report::write_atomics_csv(dir, out);
  std::ifstream csv(dir / "atomics_throughput.csv");
  std::string header, line, row;
  std::getline(csv, header);
  EXPECT_NE(header.find(",placements,gops_placement_min,gops_placement_max"), std::string::npos);
  while (std::getline(csv, line))
    if (line.rfind("global.add_i32.distinct,", 0) == 0) row = line;
  EXPECT_NE(row.find(",4," + std::to_string(ops / 1.3e-3 / 1e9).substr(0, 6)), std::string::npos)
      << row;
  std::filesystem::remove_all(dir);
}

TEST(AtomicsPlacements, SpreadTextNamesTheRange) {
  PlacementSpread s;
  s.values = {380.12, 400, 470.25};
  s.min = 380.12;
  s.median = 400;
  s.max = 470.25;
  s.repeat_spread = 0.004;
  EXPECT_EQ(placement_spread_text(s, "flag locations", "cycles", 1),
            "over 3 flag locations 380.1 to 470.2 cycles (repeats within 0.4 %)");
  EXPECT_EQ(placement_spread_text(std::nullopt, "x", "y", 1), "");
}

TEST(AtomicsJson, PlacementFieldsRoundTrip) {
  AtomicLatency l;
  l.locations = 16;
  l.cycles = summarize({400, 410, 420});
  PlacementSpread s;
  s.values = {400, 410, 420};
  s.min = 400;
  s.median = 410;
  s.max = 420;
  s.mean = 410.5;
  s.repeat_spread = 0.002;
  l.placement_cycles = s;
  const nlohmann::json jl = l;
  EXPECT_EQ(jl["locations"], 16);
  EXPECT_EQ(jl["placement_cycles"]["max"], 420);
  EXPECT_FALSE(jl.contains("placement_ns"));
  const AtomicLatency lb = jl.get<AtomicLatency>();
  EXPECT_EQ(lb.locations, 16);
  ASSERT_TRUE(lb.placement_cycles);
  EXPECT_EQ(lb.placement_cycles->values, s.values);
  EXPECT_DOUBLE_EQ(lb.placement_cycles->repeat_spread, 0.002);
  EXPECT_DOUBLE_EQ(lb.placement_cycles->mean, 410.5);
  EXPECT_FALSE(lb.placement_ns);
  EXPECT_EQ(nlohmann::json(lb), jl);
  AtomicThroughput t;
  t.placements = 4;
  t.placement_gops = s;
  const nlohmann::json jt = t;
  const AtomicThroughput tb = jt.get<AtomicThroughput>();
  EXPECT_EQ(tb.placements, 4);
  ASSERT_TRUE(tb.placement_gops);
  EXPECT_DOUBLE_EQ(tb.placement_gops->min, 400);
  EXPECT_EQ(nlohmann::json(tb), jt);
  // One placement (old results): no keys, and reading them back gives 1 and no spread.
  const nlohmann::json plain = AtomicThroughput{};
  EXPECT_FALSE(plain.contains("placements"));
  EXPECT_FALSE(plain.contains("placement_gops"));
  EXPECT_EQ(plain.get<AtomicThroughput>().placements, 1);
}

TEST(AtomicsOptions, ParsesAndRejectsWithTheKeyNamed) {
  const AtomicsOptions d = parse_atomics_options({});
  EXPECT_FALSE(d.quick);
  EXPECT_TRUE(d.matrix);
  EXPECT_EQ(d.repeats, 5);
  const AtomicsOptions q = parse_atomics_options({{"quick", "1"}});
  EXPECT_EQ(q.repeats, 3);
  // Quick measures each gated figure as a full run does: the same means, over as many.
  EXPECT_EQ(q.round_trips, d.round_trips);
  EXPECT_EQ(d.locations, 16);
  EXPECT_EQ(d.placements, 16);
  EXPECT_EQ(q.locations, d.locations);
  EXPECT_EQ(q.placements, d.placements);
  const AtomicsOptions lp = parse_atomics_options({{"locations", "1"}, {"placements", "8"}});
  EXPECT_EQ(lp.locations, 1);
  EXPECT_EQ(lp.placements, 8);
  const AtomicsOptions o = parse_atomics_options(
      {{"matrix", "off"}, {"matrix_max_sms", "32"}, {"repeats", "7"}, {"round_trips", "100"}});
  EXPECT_FALSE(o.matrix);
  EXPECT_EQ(o.matrix_max_sms, 32);
  EXPECT_EQ(o.repeats, 7);
  const AtomicsOptions p = parse_atomics_options({{"parts", "latency,matrix"}});
  EXPECT_TRUE(p.matrix);
  EXPECT_EQ(p.parts, (std::set<std::string>{"latency"}));
  auto message = [](const std::map<std::string, std::string>& kv) {
    try {
      parse_atomics_options(kv);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"bogus", "1"}}).find("bogus"), std::string::npos);
  EXPECT_NE(message({{"repeats", "0"}}).find("repeats"), std::string::npos);
  EXPECT_NE(message({{"repeats", "3x"}}).find("3x"), std::string::npos);
  EXPECT_NE(message({{"matrix", "maybe"}}).find("matrix"), std::string::npos);
  EXPECT_NE(message({{"parts", "latency,fast"}}).find("fast"), std::string::npos);
  EXPECT_NE(message({{"matrix_max_sms", "-1"}}).find("matrix_max_sms"), std::string::npos);
  EXPECT_NE(message({{"locations", "65"}}).find("locations"), std::string::npos);
  EXPECT_NE(message({{"placements", "17"}}).find("placements"), std::string::npos);
  std::set<std::string> keys;
  for (const OptionSpec& s : atomics_option_specs()) keys.insert(s.key);
  for (const char* k : {"quick", "repeats", "round_trips", "matrix", "matrix_max_sms",
                        "matrix_round_trips", "locations", "placements", "parts"})
    EXPECT_TRUE(keys.count(k)) << k;
}

// ---- JSON ----

TEST(AtomicsJson, RoundTrip) {
  FakeDevice dev(true, 6);
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  run_atomics(dev, AtomicsOptions{}, progress, stop, out);
  const nlohmann::json j = out;
  EXPECT_TRUE(j["matrix"]["values"][0][0].is_null());  // the diagonal: not measured
  const AtomicsProbeResult back = j.get<AtomicsProbeResult>();
  EXPECT_EQ(nlohmann::json(back), j);
  EXPECT_EQ(back.latency.size(), out.latency.size());
  EXPECT_EQ(back.throughput.at("global.add_i32.distinct").ops_per_launch,
            out.throughput.at("global.add_i32.distinct").ops_per_launch);
  ASSERT_TRUE(back.matrix);
  EXPECT_TRUE(std::isnan(back.matrix->values[2][2]));
  EXPECT_EQ(back.matrix->summary.clusters.size(), out.matrix->summary.clusters.size());
  EXPECT_EQ(std::string(AtomicsProbeResult::kProbe), "atomics");
}

}  // namespace
}  // namespace gd

// ---- report ----

namespace gd {
namespace {

AtomicsProbeResult fake_run(int sms = 8) {
  FakeDevice dev(true, sms);
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  run_atomics(dev, AtomicsOptions{}, progress, stop, out);
  return out;
}

TEST(AtomicsReport, FiguresHaveStableIdsUnitsAndInstructions) {
  const AtomicsProbeResult r = fake_run();
  DeviceInfo info;
  info.backend = "cuda";
  info.compute_units = 8;
  std::map<std::string, Figure> by_id;
  for (Figure& f : atomics_figures(r, info)) by_id[f.id] = f;
  RunResult rr;
  rr.device = info;
  rr.put(r);
  EXPECT_GT(expect_figure_ids_declared(rr), 0);
  for (const char* id : {"atomics.shared.cas_pingpong", "atomics.shared.exch_pingpong",
                         "atomics.global.cas_pingpong", "atomics.global.release_acquire_pingpong",
                         "atomics.host.pingpong", "atomics.shared.add_i32.distinct",
                         "atomics.shared.add_i32.same_per_warp", "atomics.global.add_i32.distinct",
                         "atomics.global.red_i32.distinct", "atomics.global.add_f32.same_per_warp",
                         "atomics.shared.cas_pingpong.cycles", "atomics.sm_matrix.median.cycles"})
    EXPECT_TRUE(by_id.count(id)) << id;
  // One id, one unit: ns always, cycles under their own id.
  EXPECT_EQ(by_id.at("atomics.shared.cas_pingpong").unit, "ns");
  const Figure& cas = by_id.at("atomics.shared.cas_pingpong.cycles");
  EXPECT_EQ(cas.unit, "cycles");
  EXPECT_FALSE(cas.higher_is_better);
  EXPECT_EQ(cas.instruction, "ATOMS.CAS");
  ASSERT_TRUE(cas.value);
  EXPECT_DOUBLE_EQ(cas.value->median, 60);
  EXPECT_EQ(by_id.at("atomics.host.pingpong").status.name(), "unsupported");
  EXPECT_FALSE(by_id.at("atomics.host.pingpong").value);
  const Figure& add = by_id.at("atomics.global.add_i32.distinct");
  EXPECT_EQ(add.unit, "GOP/s");
  EXPECT_TRUE(add.higher_is_better);
  ASSERT_TRUE(add.per_sm_per_clk);
  EXPECT_EQ(add.per_sm_per_clk_unit, "ops/clk/SM");
  EXPECT_NE(by_id.at("atomics.global.add_i32.same_per_warp").where.find("REDUX"),
            std::string::npos);
  const Figure& med = by_id.at("atomics.sm_matrix.median.cycles");
  ASSERT_TRUE(med.value);
  EXPECT_GT(med.value->median, 290);
  EXPECT_LT(med.value->median, 510);
}

TEST(AtomicsReport, CsvSummaryHtmlAndHeatMap) {
  const AtomicsProbeResult r = fake_run();
  DeviceInfo info;
  info.compute_units = 8;
  const auto dir = std::filesystem::temp_directory_path() / "gd_atomics_report_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto files = report::write_atomics_csv(dir, r);
  ASSERT_EQ(files.size(), 4u);
  std::ifstream m(dir / "atomics_matrix.csv");
  std::string header, row0;
  std::getline(m, header);
  std::getline(m, row0);
  EXPECT_EQ(header.rfind("sm,sm0,sm1", 0), 0u) << header;
  EXPECT_EQ(row0.rfind("0,,", 0), 0u) << row0;  // the diagonal is empty
  std::ostringstream term;
  report::print_atomics_summary(term, r, info);
  EXPECT_NE(term.str().find("2 groups"), std::string::npos) << term.str();
  EXPECT_NE(term.str().find("global.add_i32.distinct"), std::string::npos);
  report::SectionContext ctx;  // no charts: the HTML must stand without gnuplot
  const std::string html = report::atomics_html_section(r, info, ctx);
  EXPECT_NE(html.find("id=\"atomics\""), std::string::npos);
  EXPECT_NE(html.find("SM-to-SM latency matrix"), std::string::npos);
  EXPECT_NE(html.find("<code>ATOMS.CAS</code>"), std::string::npos);
  const auto heat = report::atomics_heatmap_chart(r);
  ASSERT_TRUE(heat);
  EXPECT_NE(heat->script.find("matrix with image"), std::string::npos);
  EXPECT_NE(heat->script.find("NaN"), std::string::npos);
  const auto bars = report::atomics_throughput_chart(r);
  ASSERT_TRUE(bars);
  EXPECT_NE(bars->script.find("with boxes"), std::string::npos);
  // With gnuplot, the heat map really renders.
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    std::string err;
    EXPECT_TRUE(report::detail::render_inline_svg(*heat, "t", &err)) << err;
    EXPECT_TRUE(report::detail::render_inline_svg(*bars, "u", &err)) << err;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gd

namespace gd {
namespace {

// The matrix measured with the flags in two places: each cell is the mean of its two, NaN
// stays NaN, and each placement's own summary is kept as evidence.
TEST(AtomicsMatrixPlacements, CellsAreMeansAndSummariesKept) {
  auto make = [](double base) {
    SmMatrix m;
    m.sms = 3;
    m.values.assign(3, std::vector<double>(3, NAN));
    m.ns = m.values;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        if (a != b) m.values[a][b] = m.ns[a][b] = base + a + b;
    m.summary = summarize_matrix(m.values, 0.5);
    m.seconds = 0.01;
    return m;
  };
  const SmMatrix m = average_placements({make(300), make(400)});
  EXPECT_EQ(m.placements, 2);
  ASSERT_EQ(m.placement_summaries.size(), 2u);
  EXPECT_NEAR(m.values[0][1], 351, 1e-9);
  EXPECT_NEAR(m.ns[2][1], 353, 1e-9);
  EXPECT_TRUE(std::isnan(m.values[1][1]));
  EXPECT_NEAR(m.summary.all.median, 352, 1.01);
  EXPECT_NEAR(m.seconds, 0.02, 1e-12);
  SmMatrix bad = make(300);
  bad.status = {StatusCode::error, "SMs 0 and 1: lost hand-over"};
  EXPECT_EQ(average_placements({make(300), bad}).status.name(), "error");
  // JSON keeps the placements.
  const nlohmann::json j = m;
  EXPECT_EQ(j.get<SmMatrix>().placements, 2);
  EXPECT_EQ(j.get<SmMatrix>().placement_summaries.size(), 2u);
}

}  // namespace
}  // namespace gd

// The host-timed ping-pong (OpenCL, Vulkan): N and 2N round trips per repeat, their difference
// per hand-over; a bad outcome ends it with that launch's outcome kept.
TEST(AtomicsPingPong, HostTimingDifferenceAndFirstBadOutcome) {
  gd::PingPongRequest r;
  r.round_trips = 1000;
  r.repeats = 3;
  std::vector<uint32_t> launches;
  auto honest = [&](uint32_t rounds, gd::PingPongOutcome* out) {
    launches.push_back(rounds);
    if (out) *out = {2ull * rounds, rounds, rounds, 0, 0};
    return 1e-3 + rounds * 400e-9;  // 1 ms launch cost, 200 ns a hand-over
  };
  const gd::PingPongTiming t = gd::time_pingpong_on_host(r, honest);
  EXPECT_EQ(launches, (std::vector<uint32_t>{125, 1000, 2000, 1000, 2000, 1000, 2000}));
  ASSERT_EQ(t.ns_per_handoff.size(), 3u);
  for (double ns : t.ns_per_handoff) EXPECT_NEAR(ns, 200, 1e-6);
  EXPECT_EQ(t.total_round_trips, 2000u);
  EXPECT_TRUE(gd::pingpong_check(t.outcome, t.total_round_trips).empty());
  // Noise makes t(2N) <= t(N): the upper bound t(2N)/4N instead.
  int k = 0;
  auto noisy = [&](uint32_t rounds, gd::PingPongOutcome* out) {
    if (out) *out = {2ull * rounds, rounds, rounds, 0, 0};
    return ++k == 3 ? 0.5e-3 : 1e-3;  // the first 2N launch is faster than its N launch
  };
  const gd::PingPongTiming u = gd::time_pingpong_on_host(r, noisy);
  EXPECT_NEAR(u.ns_per_handoff.at(0), 0.5e-3 / 4000 * 1e9, 1e-9);
  // A lost hand-over in the second repeat's 2N launch: two repeats timed, that outcome kept.
  launches.clear();
  auto lossy = [&](uint32_t rounds, gd::PingPongOutcome* out) {
    launches.push_back(rounds);
    const bool lose = launches.size() == 5;
    if (out) *out = {2ull * rounds - (lose ? 1 : 0), rounds, rounds, 0, 0};
    return 1e-3 + rounds * 400e-9;
  };
  const gd::PingPongTiming v = gd::time_pingpong_on_host(r, lossy);
  EXPECT_EQ(v.ns_per_handoff.size(), 1u);
  EXPECT_EQ(launches.size(), 5u);
  EXPECT_EQ(v.total_round_trips, 2000u);
  EXPECT_FALSE(gd::pingpong_check(v.outcome, v.total_round_trips).empty());
}

// The located host timing (OpenCL and Vulkan global ping-pongs): one warm-up, then every
// repeat visits every location in turn, N and 2N at each, and each location keeps its own
// samples, which the probe's placement summary reads as CUDA's 16 flag locations.
TEST(AtomicsPingPong, HostTimingVisitsEveryLocationEveryRepeat) {
  gd::PingPongRequest r;
  r.round_trips = 100;
  r.repeats = 3;
  r.locations = 4;
  std::vector<std::pair<int, uint32_t>> launches;
  auto placed = [&](int loc, uint32_t rounds, gd::PingPongOutcome* out) {
    launches.emplace_back(loc, rounds);
    if (out) *out = {2ull * rounds, rounds, rounds, 0, 0};
    return 1e-3 + rounds * (1 + loc) * 1e-6;  // location loc: 500 (1 + loc) ns a hand-over
  };
  const gd::PingPongTiming t = gd::time_pingpong_on_host(r, placed);
  ASSERT_EQ(launches.size(), 1u + 3 * 4 * 2);
  EXPECT_EQ(launches[0], std::make_pair(0, 12u));  // the warm-up
  for (std::size_t i = 1; i < launches.size(); ++i) {
    const std::size_t k = (i - 1) / 2;
    EXPECT_EQ(launches[i].first, int(k % 4)) << i;
    EXPECT_EQ(launches[i].second, i % 2 ? 100u : 200u) << i;
  }
  EXPECT_EQ(t.ns_per_handoff.size(), 12u);
  ASSERT_EQ(t.ns_by_location.size(), 4u);
  for (int loc = 0; loc < 4; ++loc) {
    ASSERT_EQ(t.ns_by_location[loc].size(), 3u) << loc;
    for (double ns : t.ns_by_location[loc]) EXPECT_NEAR(ns, 500.0 * (1 + loc), 1e-6) << loc;
  }
  EXPECT_EQ(t.total_round_trips, 200u);
  const auto figure = gd::summarize_placed(t.ns_by_location);
  ASSERT_TRUE(figure && figure->spread);
  EXPECT_EQ(figure->spread->values.size(), 4u);
  EXPECT_NEAR(figure->summary.median, 1250, 1e-6);  // the mean over the locations
  // One location (the plain form, and r.locations 1): no per-location samples.
  r.locations = 1;
  EXPECT_TRUE(gd::time_pingpong_on_host(r, placed).ns_by_location.empty());
}

// The placement rule the three backends share (CUDA's): a target rounded up to whole 2 MiB
// regions plus two, 64 KiB further into a region each time; flag locations a region, 4 KiB
// and a line apart. Each placement lies in another region at another offset.
TEST(AtomicsPlacements, StrideAndSpansAreCudasRule) {
  const uint64_t region = uint64_t(2) << 20;
  EXPECT_EQ(gd::kPlacementRegion, region);
  EXPECT_EQ(gd::placement_stride(4), 3 * region + 65536);
  EXPECT_EQ(gd::placement_stride(region), 3 * region + 65536);
  EXPECT_EQ(gd::placement_stride(region + 4), 4 * region + 65536);
  EXPECT_EQ(gd::placements_bytes(1000, 1), 1000u);
  EXPECT_EQ(gd::placements_bytes(1000, 16), 15 * (3 * region + 65536) + 1000);
  EXPECT_EQ(gd::locations_bytes(1), gd::kLocationBytes);
  EXPECT_EQ(gd::locations_bytes(16), 15 * (region + 4096 + 128) + 4096);
  EXPECT_EQ(gd::kLocationStride % 128, 0u);
  std::set<uint64_t> regions, offsets;
  for (int p = 0; p < gd::kMaxPlacements; ++p) {
    const uint64_t at = gd::placement_stride(uint64_t(1) << 20) * uint64_t(p);
    regions.insert(at / region);
    offsets.insert(at % region);
    EXPECT_EQ(at % 8, 0u);  // a whole number of 64-bit words
  }
  EXPECT_EQ(regions.size(), 16u);
  EXPECT_EQ(offsets.size(), 16u);
}

// A throughput launch's groups per SM, CUDA's shape on every backend: 8 of 256 threads; a
// shared pattern as many as the SM's shared memory holds, at least the floor asked for.
TEST(AtomicsLayout, GroupsPerUnitAreCudasShape) {
  gd::ThroughputLayout l;
  l.threads = 256;
  l.space = gd::AtomicSpace::global;
  for (gd::Contention c : {gd::Contention::distinct, gd::Contention::same_gpu}) {
    l.contention = c;
    EXPECT_EQ(gd::throughput_groups_per_unit(l, 0, 4), 8u);
  }
  l.space = gd::AtomicSpace::shared;
  l.contention = gd::Contention::distinct;
  EXPECT_EQ(gd::throughput_groups_per_unit(l, 64 * 1024, 4), 8u);
  l.contention = gd::Contention::bank_conflict;
  l.ways = 32;  // 32 KiB an array, 33 KiB with the allowance
  EXPECT_EQ(gd::throughput_groups_per_unit(l, 228 * 1024, 1), 6u);  // CUDA on an H200
  EXPECT_EQ(gd::throughput_groups_per_unit(l, 64 * 1024, 1), 1u);
  EXPECT_EQ(gd::throughput_groups_per_unit(l, 64 * 1024, 4), 4u);  // OpenCL's, Vulkan's floor
  l.ways = 8;
  EXPECT_EQ(gd::throughput_groups_per_unit(l, 64 * 1024, 4), 7u);
}

// The placed timing every backend shares: each repeat visits every placement in turn, the
// seconds land in launch order and, with more than one placement, per placement too.
TEST(AtomicsPlacements, TimedRepeatByRepeatAndKeptPerPlacement) {
  std::vector<std::pair<int, int>> order;
  gd::ThroughputTiming t;
  gd::time_placements(t, 2, 3, [&](int rep, int p) {
    order.emplace_back(rep, p);
    return 10.0 * rep + p;
  });
  EXPECT_EQ(order,
            (std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}));
  EXPECT_EQ(t.seconds, (std::vector<double>{0, 1, 2, 10, 11, 12}));
  ASSERT_EQ(t.seconds_by_placement.size(), 3u);
  EXPECT_EQ(t.seconds_by_placement[2], (std::vector<double>{2, 12}));
  gd::ThroughputTiming one;
  gd::time_placements(one, 3, 1, [](int rep, int) { return double(rep); });
  EXPECT_EQ(one.seconds, (std::vector<double>{0, 1, 2}));
  EXPECT_TRUE(one.seconds_by_placement.empty());
}

// What a figure's listing names from its kernel's SASS (OpenCL's and Vulkan's on NVIDIA): the
// game's own atomic where the kernel also counts with an add, the polling load beside an
// exchange, the ordered pair of a release/acquire game, every atomic of a throughput kernel.
TEST(AtomicListing, NamesTheGamesOwnInstruction) {
  gd::KernelMemoryOps ops;
  ops.load = "LDG.E.STRONG.GPU";
  ops.store = "STG.E.STRONG.SM";
  ops.atomic_all = "ATOMG.E.ADD.STRONG.GPU + ATOMG.E.EXCH.STRONG.GPU + ATOMG.E.CAS.STRONG.GPU";
  EXPECT_EQ(gd::atomic_listing(ops, "pingpong.global.cas_pingpong"), "ATOMG.E.CAS.STRONG.GPU");
  EXPECT_EQ(gd::atomic_listing(ops, "pingpong.global.exch_pingpong"),
            "LDG.E.STRONG.GPU + ATOMG.E.EXCH.STRONG.GPU");
  EXPECT_EQ(gd::atomic_listing(ops, "pingpong.global.release_acquire_pingpong"),
            "LDG.E.STRONG.GPU + STG.E.STRONG.SM");
  EXPECT_EQ(gd::atomic_listing(ops, "global.add_i32.distinct"), ops.atomic_all);
  // A game whose kind is not in the kernel names its first atomic; no atomic, nothing.
  ops.atomic_all = "ATOMS.ADD";
  EXPECT_EQ(gd::atomic_listing(ops, "pingpong.shared.cas_pingpong"), "ATOMS.ADD");
  ops.atomic_all.clear();
  EXPECT_EQ(gd::atomic_listing(ops, "shared.add_i32.distinct"), "");
}
