// Atomics: the backend-neutral contract of the atomics probe (ping-pong latency between two
// threads, an SM-to-SM latency matrix, atomic throughput), the host-side exact checks of
// what every kernel left in memory, the matrix summary, and the result model.
//
// Every kernel's final memory is checked exactly on the host: a counter must equal the
// number of increments the layout says hit it, a ping-pong flag must end at 2 x round trips,
// so an atomic that was lost, doubled or silently turned into a plain store is an error,
// never a figure.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/sass.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/status.hpp"

namespace gd {

// ---- ping-pong: two threads hand a counter back and forth ----

// Player A waits for the flag to hold 2k and makes it 2k+1; player B waits for 2k+1 and
// makes it 2k+2. After R round trips the flag holds exactly 2R. A half round trip (one
// hand-over) is the latency reported.
enum class PingPong {
  shared_cas,              // two warps of one block, atomicCAS on shared memory
  shared_exch,             // the same, waiting by load and handing over by atomicExch
  global_cas,              // two blocks on two SMs, atomicCAS on global memory
  global_exch,             // the same with load-poll + atomicExch
  global_release_acquire,  // st.release.gpu / ld.acquire.gpu, a payload checked behind it
  host,                    // a GPU thread and a host thread through mapped pinned memory
};
std::string to_string(PingPong k);
const std::vector<PingPong>& all_ping_pongs();

struct PingPongRequest {
  PingPong kind = PingPong::shared_cas;
  uint32_t round_trips = 1000;  // timed, per repeat (after a warm-up of round_trips / 8)
  int repeats = 5;
  // Global kinds: flag locations (each its own line in its own 2 MiB region, so the L2's
  // address hash puts them on different slices); every repeat visits every location, each for
  // `round_trips`. Other kinds (and backends without placement control) use one.
  int locations = 1;
};

// What the two players left behind; checked by pingpong_check.
struct PingPongOutcome {
  uint64_t final_value = 0;     // the flag after all repeats
  uint64_t handoffs_a = 0;      // hand-overs player A made (counted by A itself)
  uint64_t handoffs_b = 0;      // ... and player B
  uint64_t timeouts = 0;        // spins that hit their bound (then both players stop)
  uint64_t payload_errors = 0;  // release/acquire: payload read behind the flag was stale
};

struct PingPongTiming {
  std::vector<double> cycles_per_handoff;  // one per repeat; empty without a clock
  std::vector<double> ns_per_handoff;      // one per repeat
  std::optional<double> clock_mhz;
  uint64_t total_round_trips = 0;  // warm-up included: what the flag must end at, halved
  // Several flag locations: [location][repeat] (the flat vectors above hold every sample).
  // Empty: one location, the flat vectors are its repeats.
  std::vector<std::vector<double>> cycles_by_location, ns_by_location;
  PingPongOutcome outcome;
  int sm_a = -1, sm_b = -1;              // where the players ran, where known
  std::optional<double> clock_peak_mhz;  // as ThroughputTiming's
};

// Empty when the outcome is exactly what `total_round_trips` hand-overs leave; else why not.
std::string pingpong_check(const PingPongOutcome& o, uint64_t total_round_trips);

// A ping-pong timed on the host (OpenCL, Vulkan): `play(rounds, outcome)` runs one launch of
// `rounds` round trips and returns its seconds, filling *outcome where it is not null. A
// warm-up launch of N/8, then per repeat N and 2N round trips: their difference is N round
// trips without the launch cost (where noise makes it non-positive, t(2N)/4N, an upper bound).
// The first launch whose outcome fails pingpong_check ends it, its outcome and round trips
// kept for the probe to report.
PingPongTiming time_pingpong_on_host(const PingPongRequest& r,
                                     const std::function<double(uint32_t, PingPongOutcome*)>& play);
// The same over r.locations flag locations (global kinds): `play(location, rounds, outcome)`.
// One warm-up at location 0, then every repeat visits every location in turn (N and 2N at
// each, as CUDA's loop), filling ns_by_location with more than one location.
PingPongTiming time_pingpong_on_host(
    const PingPongRequest& r,
    const std::function<double(int, uint32_t, PingPongOutcome*)>& play_at);

// ---- the SM-to-SM matrix ----

// A round-robin tournament over n players (the circle method): n-1 rounds for even n, n for
// odd n (one player rests each round); every unordered pair meets exactly once and no player
// is in two pairs of one round. The pairs of a round run concurrently in one launch.
std::vector<std::vector<std::pair<int, int>>> round_robin_rounds(int n);

struct MatrixRequest {
  int sms = 0;                // SMs 0..sms-1 take part
  uint32_t round_trips = 64;  // per segment
  int segments = 4;           // timed segments per pair; the pair's figure is their median
  uint32_t warmup_round_trips = 8;
  // Which copy of the flag lines the pairs use: placement k moves every pair's flag line
  // k regions (several MiB) further, so its L2 slice changes with k (the slice is chosen by
  // a hash of the address). A pair's hand-over depends on where its slice lies relative to
  // both SMs; averaging placements leaves what depends on the SMs.
  int placement = 0;
};

// One pair's segments, as the backend measured them.
struct PairSample {
  int a = 0, b = 0;  // SM ids, a < b
  std::vector<double> cycles_per_handoff;
  std::vector<double> ns_per_handoff;
  PingPongOutcome outcome;
};

struct MatrixTiming {
  int sms = 0;
  uint64_t round_trips_per_pair = 0;  // warm-up included (the flag's end value / 2)
  std::vector<PairSample> pairs;
  std::optional<double> clock_mhz;
  double seconds = 0;  // the launch(es), wall
};

// How the matrix's rows group: SMs whose rows look alike (same distance to everything) form
// a cluster; a 2-cluster split with a gap well above the noise is e.g. two L2 partitions.
struct SmCluster {
  std::vector<int> sms;
  double median_within = 0;  // median latency between two SMs of the cluster
};

struct MatrixSummary {
  Summary all;                      // over every measured pair
  std::vector<SmCluster> clusters;  // one cluster: no structure above the noise
  // Median latency between cluster i and j, row-major clusters x clusters (i == j: within).
  std::vector<double> between;
  double noise = 0;       // robust sigma of a pair's segments, median over pairs
  std::string structure;  // one sentence
};

struct SmMatrix {
  Status status;
  int sms = 0;
  std::string unit = "cycles";  // of `values` (ns without a clock)
  // sms x sms, symmetric, NaN on the diagonal and where a pair was not measured.
  std::vector<std::vector<double>> values;
  std::vector<std::vector<double>> ns;
  uint64_t round_trips_per_pair = 0;
  std::optional<double> clock_mhz;
  double seconds = 0;
  std::optional<std::string> instruction;
  MatrixSummary summary;
  // Flag placements averaged (1: one flag line per pair), and the summary of each
  // placement's matrix alone: how much the flag's slice moves a pair.
  int placements = 1;
  std::vector<MatrixSummary> placement_summaries;
};

// Cell by cell mean of matrices of the same pairs measured with their flags in other places
// (NaN where any is NaN); status: the first not ok. Summary recomputed; each input's summary
// kept in placement_summaries. Exposed for tests.
SmMatrix average_placements(const std::vector<SmMatrix>& placements);

// The matrix from the pairs (median of each pair's segments), every pair checked; a pair
// that fails its check marks the matrix as an error naming it (its cell stays NaN).
SmMatrix assemble_matrix(const MatrixTiming& t, bool have_cycles);
// Clusters rows by similarity: splits a group in two (2-means on the rows, farthest-pair
// seeds) while the gap between the halves is well above the noise, up to `max_depth`
// levels. Exposed for tests.
MatrixSummary summarize_matrix(const std::vector<std::vector<double>>& m, double noise,
                               int max_depth = 3);

// ---- throughput ----

enum class AtomicSpace { shared, global };
enum class AtomicOp { add, min, max, cas };
enum class AtomicType { i32, u64, f32, f64, f16x2, bf16x2 };
// Which threads share an address: none (every thread its own word, consecutive), `ways`
// lanes of a warp on distinct words of one shared-memory bank (bank conflicts), all lanes of
// a warp on one word, all threads of a block, all threads of the grid.
enum class Contention { distinct, bank_conflict, same_per_warp, same_per_block, same_gpu };
enum class AtomicScope { cta, gpu, sys };
std::string to_string(AtomicSpace s);
std::string to_string(AtomicOp o);
std::string to_string(AtomicType t);
std::string to_string(Contention c);
std::string to_string(AtomicScope s);
int type_bytes(AtomicType t);

struct ThroughputRequest {
  AtomicSpace space = AtomicSpace::global;
  AtomicOp op = AtomicOp::add;
  AtomicType type = AtomicType::i32;
  Contention contention = Contention::distinct;
  int ways = 1;            // bank_conflict: 2..32 lanes per bank
  bool use_return = true;  // atom (result used) or red (no result)
  AtomicScope scope = AtomicScope::gpu;
  uint64_t iterations = 0;  // per thread; 0: the backend's default (~1-2 ms per launch)
  int repeats = 5;
  // Global: disjoint placements of the target (regions MiBs apart in one allocation, so the
  // address hash spreads each differently over the L2 slices); each repeat visits every one.
  int placements = 1;
  // The figure's key in the result: "shared.add_i32.distinct", "global.red_i32.distinct",
  // "global.add_i32.distinct.cta" ...
  std::string key() const;
};

// What one launch does: blocks x threads threads, each making `iterations` atomics on one
// word of the target (see target_word). Warps are 32 threads on every backend (an address
// pattern, not a claim about the hardware's SIMD width).
struct ThroughputLayout {
  AtomicSpace space = AtomicSpace::global;
  Contention contention = Contention::distinct;
  int ways = 1;
  uint64_t blocks = 0, threads = 0;  // threads per block, a multiple of 32
  uint64_t iterations = 0;
  uint64_t ops() const { return blocks * threads * iterations; }
};

// Work-groups per SM (compute unit) of a throughput launch of 256-thread groups, CUDA's
// shape on every backend: 8 (2048 threads, a full NVIDIA SM); a shared-memory pattern as many
// as `shared_per_unit` bytes hold (its array plus 1 KiB each), at least `min_groups`.
uint64_t throughput_groups_per_unit(const ThroughputLayout& l, uint64_t shared_per_unit,
                                    uint64_t min_groups);

// Words of the flattened target the kernel's atomics land in (shared: every block's array,
// one after the other, as the kernel copies them out) and the word thread `g` (global index
// block * threads + thread) hits. Shared: each warp owns 32 x ways words.
uint64_t target_words(const ThroughputLayout& l);
uint64_t target_word(const ThroughputLayout& l, uint64_t g);
uint64_t shared_words_per_block(const ThroughputLayout& l);
// The largest count of additions of 1 one word may receive and still hold the exact count
// (2^24 for f32, 2048 for f16, 256 for bf16; integers wrap and stay checkable).
uint64_t max_exact_count(AtomicType t);
// Iterations per thread the layout may use for `r` so every word's result stays exact.
uint64_t max_exact_iterations(const ThroughputRequest& r, const ThroughputLayout& l);
// The value every word starts at and the operand thread g applies at iteration k (adds: 1;
// min/max: a value whose extreme over a word's threads has a closed form; cas: none).
uint64_t initial_word(const ThroughputRequest& r);
int32_t minmax_operand(AtomicOp op, uint64_t g, uint64_t k, uint64_t iterations);

// The check: `final_words` holds every target word's raw bits after `launches` launches
// (each starting from initial_word; zero-extended to 64 bits), `cas_successes` per thread
// (CAS only: the successful swaps each thread counted). Empty when every word is exactly
// what the layout's atomics leave; else the first wrong word, expected and found.
std::string throughput_check(const ThroughputRequest& r, const ThroughputLayout& l,
                             const std::vector<uint64_t>& final_words,
                             const std::vector<uint32_t>& cas_successes);
// Conversions the check and the kernels' hosts share.
float half_to_float(uint16_t h);
float bf16_to_float(uint16_t b);

struct ThroughputTiming {
  ThroughputLayout layout;
  std::vector<double> seconds;  // per timed launch
  // Several placements: [placement][repeat] (`seconds` holds every launch). Empty: one.
  std::vector<std::vector<double>> seconds_by_placement;
  std::vector<double> clock_mhz;  // SM clock seen during each launch, where measurable
  // The highest clock the backend has seen on the device so far, where it tracks one
  // (Vulkan); a figure whose clock is far below it ran at a low clock and says so.
  std::optional<double> clock_peak_mhz;
  int sms = 0;              // SMs the grid covered
  std::string check_error;  // empty: throughput_check passed
};

// Times `repeats` x `places` launches into t.seconds, and with more than one placement into
// t.seconds_by_placement too ([placement][repeat]); every repeat visits every placement in
// turn, so a drift over time touches all alike. launch(repeat, placement) runs one launch and
// returns its seconds. The backends' throughput timing (CUDA, OpenCL, Vulkan) all use it.
void time_placements(ThroughputTiming& t, int repeats, int places,
                     const std::function<double(int, int)>& launch);

// What a backend offers the atomics probe. Calls throw AllocationFailed when memory cannot
// be had and BackendError on any other API error; a failed check is reported in the
// timing's check_error (or the outcome), never thrown.
class AtomicsKernels : public KernelSet {
 public:
  static constexpr const char* kProbe = "atomics";
  virtual ~AtomicsKernels() = default;
  // Whether the backend reads an SM clock (cycles); OpenCL has none.
  virtual bool has_clock() const = 0;
  virtual Support supports(PingPong kind) const = 0;
  virtual PingPongTiming ping_pong(const PingPongRequest& r) = 0;
  virtual Support supports(const ThroughputRequest& r) const = 0;
  virtual ThroughputTiming throughput(const ThroughputRequest& r) = 0;
  virtual Support supports_matrix() const { return Support::no("not implemented by this backend"); }
  virtual MatrixTiming sm_matrix(const MatrixRequest&) { throw BackendError("no matrix kernel"); }
  // The machine instruction(s) timed, e.g. "ATOMS.CAS", "REDUX.SUM + RED.E.ADD.STRONG.GPU",
  // where the backend can read its own code. what: "pingpong.<kind>", "matrix", or a
  // throughput key.
  virtual std::optional<std::string> instruction(const std::string&) { return std::nullopt; }
};

// The instruction(s) a figure timed, from the memory instructions of its kernel's SASS
// (sass.hpp): a ping-pong's own atomic (the first CAS of a CAS game, the polling load and
// the first exchange of an exchange game, the ordered load and store of a release/acquire
// one), every atomic of a throughput kernel. `what`: "pingpong.<kind>" or a throughput key.
// Empty where the kernel holds no atomic.
std::string atomic_listing(const KernelMemoryOps& ops, const std::string& what);

// ---- placements: a figure over several locations of its target in memory ----

// Where the placements and flag locations lie, the same on every backend (CUDA's rule): each
// in its own 2 MiB region of one allocation (another large page, so another physical address
// and with it another L2 slice) and at another offset inside its region.
constexpr uint64_t kPlacementRegion = uint64_t(2) << 20;
constexpr int kMaxPlacements = 16;  // throughput target placements
constexpr int kMaxLocations = 64;   // ping-pong flag locations
// Flag locations: one region and 4 KiB + one 128-byte line apart; each holds the flag, the
// payload and the abort word on their own lines.
constexpr uint64_t kLocationStride = kPlacementRegion + 4096 + 128;
constexpr uint64_t kLocationBytes = 4096;
// Repeats of a figure over several placements on OpenCL and Vulkan, at most (CUDA takes the
// option's 5): each repeat is a launch per placement, and a whole run on those backends has
// less time to spare; the repeats' means agree within 0.5 % on an H200.
constexpr int kPlacedRepeats = 3;
// Bytes from one placement of a target of `target_bytes` to the next: the target rounded up
// to whole regions, two regions more, and 64 KiB further into the region each time.
uint64_t placement_stride(uint64_t target_bytes);
// Bytes one allocation needs for `places` placements (the last one's end).
uint64_t placements_bytes(uint64_t target_bytes, int places);
// Bytes one allocation needs for `locations` flag locations.
uint64_t locations_bytes(int locations);

// Where a line lives (its L2 slice, near or far partition) is set by its physical address,
// which differs from process to process; a figure measured at one placement is tight within
// a run and different in the next. Measuring several placements and averaging over them
// makes the figure repeatable; the spread over placements is kept as evidence.
struct PlacementSpread {
  std::vector<double> values;           // each placement's median over its repeats, in order
  double min = 0, median = 0, max = 0;  // over `values`
  double mean = 0;                      // over `values`: what the figure estimates
  double repeat_spread = 0;             // median over placements of the relative IQR over repeats
  double relative_range() const { return mean != 0 ? (max - min) / mean : 0; }
};

// The figure from samples[placement][repeat], every repeat having visited every placement:
// with one placement (after dropping empty ones), the summary of its repeats and no spread;
// with several, the summary over repeats of each repeat's mean over the placements (its
// median is the figure, its quartiles the repeat noise) and the spread. The mean, not the
// median, over placements: where placements fall into two groups (near and far L2 slices)
// the median of 16 jumps between the groups as their counts change from run to run, the
// mean moves with the fraction only. Nullopt when there is no sample at all.
struct PlacedFigure {
  Summary summary;
  std::optional<PlacementSpread> spread;
};
std::optional<PlacedFigure> summarize_placed(const std::vector<std::vector<double>>& samples);

// ---- the result model ----

struct AtomicLatency {
  Status status;
  std::optional<Summary> cycles;  // per hand-over (half a round trip)
  std::optional<Summary> ns;
  std::optional<double> clock_mhz;
  uint64_t round_trips = 0;  // per timed repeat
  std::optional<int> sm_a, sm_b;
  std::optional<std::string> instruction;
  std::string note;
  int locations = 1;  // flag locations the figure is the mean over
  std::optional<PlacementSpread> placement_cycles, placement_ns;  // with several locations
};

struct AtomicThroughput {
  Status status;
  std::string space, op, type, contention, scope;
  int ways = 1;
  bool use_return = true;
  uint64_t ops_per_launch = 0;  // thread-level atomics the program asked for
  std::optional<Summary> gops;  // 1e9 thread-level atomics per second, GPU-wide
  std::optional<Summary> ops_per_clk_sm;
  std::optional<double> clock_mhz;
  int sms = 0;
  std::optional<std::string> instruction;
  std::string note;    // e.g. the compiler folded a warp's atomics into one
  int placements = 1;  // target placements the figure is the mean over
  std::optional<PlacementSpread> placement_gops;  // with several placements
};

struct AtomicsProbeResult {
  static constexpr const char* kProbe = "atomics";
  Status status;
  double wall_seconds = 0;
  std::optional<double> clock_mhz_measured;            // median SM clock over the probe's kernels
  std::map<std::string, AtomicLatency> latency;        // "shared.cas_pingpong" ...
  std::map<std::string, AtomicThroughput> throughput;  // "shared.add_i32.distinct" ...
  std::optional<SmMatrix> matrix;
};

void to_json(nlohmann::json& j, const PlacementSpread& s);
void from_json(const nlohmann::json& j, PlacementSpread& s);
void to_json(nlohmann::json& j, const MatrixSummary& s);
void from_json(const nlohmann::json& j, MatrixSummary& s);
void to_json(nlohmann::json& j, const SmMatrix& m);
void from_json(const nlohmann::json& j, SmMatrix& m);
void to_json(nlohmann::json& j, const AtomicLatency& l);
void from_json(const nlohmann::json& j, AtomicLatency& l);
void to_json(nlohmann::json& j, const AtomicThroughput& t);
void from_json(const nlohmann::json& j, AtomicThroughput& t);
void to_json(nlohmann::json& j, const AtomicsProbeResult& r);
void from_json(const nlohmann::json& j, AtomicsProbeResult& r);

// ---- headline figures (figures.cpp) ----

// "over 16 flag locations 380.1 to 470.2 cycles (repeats within 0.4 %)": where a figure is
// the median over placements of its target, the range the placement moved it over; empty
// without a spread.
std::string placement_spread_text(const std::optional<PlacementSpread>& s, const std::string& what,
                                  const std::string& unit, int decimals);
// "global add i32, distinct" and the placement spread of a throughput, for labels and tables.
std::string describe(const AtomicThroughput& t);
std::string gops_spread(const AtomicThroughput& t);
// Headline figures: "atomics.<latency key>" (ns; .cycles where the device has a clock; lower
// is better), "atomics.<throughput key>" (GOP/s of thread-level atomics, GPU-wide, with
// ops/clk/SM), "atomics.sm_matrix.{min,median,max}"; atomics_figure_ids() declares them.
std::vector<Figure> atomics_figures(const AtomicsProbeResult& r, const DeviceInfo& info);
std::vector<std::string> atomics_figure_ids();

}  // namespace gd
