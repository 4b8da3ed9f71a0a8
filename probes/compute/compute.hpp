// What one SM does per cycle: the catalogue of instructions under test, the kernel-source
// generator (kernels are data: CUDA C++ with inline PTX, and OpenCL C), Little's-law
// arithmetic, the backend-neutral contract of the compute probe and its result model.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/status.hpp"

namespace gd {

// ---- the instructions under test ----

// One instruction (or a fixed, small group of them) as a dependent chain step. The CUDA
// fields are C++ fragments pasted into the generated kernel; "{i}" stands for the chain's
// index. Available to every fragment: lane, fs/fb/fc (float seed and operands), db/dc
// (double), ub/uc (unsigned), ub64 (unsigned long long), hb/hc (half2 bits), bb/bc (bf16x2
// bits), hs (one half's bits, unsigned short).
struct ComputeOp {
  std::string name;        // "fp32.fma"
  std::string klass;       // fp32 fp64 fp16 int32 int64 sfu precise conv warp sync tensor
  std::string label;       // "FP32 fma"
  std::string prologue;    // once per thread, before the chains (shared memory, descriptors)
  std::string decl;        // per chain: declares and seeds its state
  std::string step;        // per chain: one dependent step
  std::string fold;        // per chain: folds its state into `unsigned acc`
  std::string ptx_expect;  // a substring the PTX must hold
  std::vector<std::string> sass_expect;  // opcodes (prefixes) the timed loop must hold
  int insts_per_step = 1;                // instructions of the intended kind in one step
  double flops_per_op = 1;               // arithmetic operations one thread-instruction does
  // Thread-instructions per clock per SM the architecture documents for sm_90, if any.
  std::optional<double> peak_per_clk_sm;
  std::string peak_source;
  bool sm90a = false;      // needs the sm_90a target (wgmma)
  int min_cc = 0;          // compute capability x 10 its PTX needs beyond the class's (0: none)
  bool warpgroup = false;  // block must be a multiple of 128 threads; ILP fixed at 1
  // Threads per block the kernel is compiled for (0: 1024, which caps a thread at 64
  // registers): 256 where ILP 8 chains need more (DMMA m16n8: 8 x 4 doubles of accumulators).
  int launch_bound = 0;
  int steps_per_iter = 0;  // override of the generator's unroll (0: from the class)
  // OpenCL C fragments ({i} as above; fs/fb/fc, ub/uc, and for fp16 hb/hc as half2); empty
  // cl_step: no OpenCL version.
  std::string cl_decl, cl_step, cl_fold, cl_ext;
  // OpenCL: once per work-item before the chains (__local arrays), and the program's build
  // options (empty: none).
  std::string cl_prologue, cl_options;
  // The chain the host can replay exactly (IEEE fma is correctly rounded everywhere):
  // "f32fma" a = fma(a, fb, fc); "f64fma" a = fma(a, db, dc); "f64fma_imm" a = fma(a, K, dc)
  // with K = 1 - 2^-10; empty: no host reference.
  std::string ref;
  // Where the intended instruction is absent from the loop: why, from the SASS (replaces
  // the generic "not native here" in the figure's reason).
  std::string missing_why;
  // An op that ptxas compiles to `elided_to` (e.g. NOP) by construction, with why: the loop
  // holding only that is the finding (no cost beyond an issue slot), not a failed figure.
  std::string elided_to, elided_why;
};

// Kernel arguments every backend passes (the host reference replays them).
struct ComputeSeeds {
  float fs = 1.0f, fb = 0.999f, fc = 0.001f;
  unsigned ub = 0x9E3779B9u, uc = 5u;
};

// Every instruction the probe knows, in table order.
const std::vector<ComputeOp>& compute_ops();
const ComputeOp* find_compute_op(const std::string& name);
// Adds an op a backend offers beyond the catalogue (Vulkan: each cooperative-matrix shape its
// driver lists), found by find_compute_op from then on; an op of a known name is not added
// again (the known one is returned). Thread-safe; references stay valid.
const ComputeOp& register_compute_op(ComputeOp op);
// Appends the tensor-core ops (model_tensor.cpp) to the table being built.
void append_tensor_ops(std::vector<ComputeOp>& ops);

// ---- the generator ----

// Steps of each chain per loop iteration, so that the loop's own instructions (counter,
// compare, branch) cost < 1% of issue slots for single-issue ops.
int steps_per_iteration(const ComputeOp& op, int ilp);
// The same for the OpenCL generator (shorter bodies: PoCL's LLVM is slow per statement).
int opencl_steps_per_iteration(const ComputeOp& op, int ilp);
// The 32-bit checksum one thread of `op`'s kernel writes after `steps_per_chain` dependent
// steps of each of its `ilp` chains, recomputed on the host; nullopt where op.ref is empty.
std::optional<uint32_t> reference_checksum(const ComputeOp& op, int ilp, uint64_t steps_per_chain,
                                           const ComputeSeeds& seeds = {});
// Name of the generated kernel for an ILP (and the mixed pair, where there is one).
std::string compute_kernel_name(int ilp);
// CUDA C++ source with one kernel per ILP; `mix`, when given, interleaves ILP chains of it
// with the ILP chains of `op` (mixed issue). Kernel signature:
//   (unsigned* out, unsigned long long* tim, int iters, float fs, float fb, float fc,
//    unsigned ub, unsigned uc)
// out: one word per thread; tim: per block {cycles, t0_ns, t1_ns, 0}.
std::string generate_cuda_source(const ComputeOp& op, const std::vector<int>& ilps,
                                 const ComputeOp* mix = nullptr);
// The in-kernel counter an OpenCL platform's compiler offers (cl_vendor.hpp chooses it).
enum class OpenCLClock {
  none,    // no counter: times from event profiling, the clock the driver reports
  nvidia,  // inline PTX: %clock64, %globaltimer, %smid
  amd,     // clang amdgcn: s_memtime, s_memrealtime (100 MHz), s_getreg HW_ID
};
// The OpenCL C a clocked kernel needs: `defs` once at the top of the program, `start`
// (declares ulong gd_t0, gd_t1, gd_c0, gd_c1; reads gd_t0 in ns, then gd_c0 in cycles)
// before the loop, `end` (gd_c1, then gd_t1) after it, `sm` (declares uint gd_sm, the
// compute unit's id) in the work-group's record. Empty for OpenCLClock::none.
struct OpenCLClockCode {
  std::string defs, start, end, sm;
};
OpenCLClockCode opencl_clock_code(OpenCLClock clock);
// What the OpenCL generator adds for a platform.
struct OpenCLSourceOptions {
  // NVIDIA's OpenCL (its compiler takes inline PTX): %clock64, %globaltimer and %smid read
  // around the loop, each work-group writing CUDA's tim record, the loop kept rolled. The
  // PTX serves the measurement only, never the op under test.
  bool nv_clock = false;
  // Another vendor's counter (cl_vendor.hpp), read the same way and writing the same
  // record; nv_clock, where set, wins.
  OpenCLClock clock = OpenCLClock::none;
};
// OpenCL C source, same shape, kernels named like CUDA's. Without a clock tim is unused
// (tim[0] = iters keeps the argument).
std::string generate_opencl_source(const ComputeOp& op, const std::vector<int>& ilps,
                                   const OpenCLSourceOptions& opt = {});
// An OpenCL C statement for NVIDIA's compiler that reads a PTX special register into `var`
// through inline PTX: "globaltimer" and "clock64" into a ulong, "smid" and "warpid" into a
// uint. The measurement's machinery only (the clock, where a work-group ran), never the
// operation a figure times. Shared by every probe's NVIDIA OpenCL kernels.
std::string nv_cl_read_sreg(const std::string& reg, const std::string& var);

// Steps of each chain per iteration in a mixed pair whose first op is `first` (half the
// usual body per op, so the loop keeps its size).
int mixed_steps_per_iteration(const ComputeOp& first, int ilp);
// Thread-level operations of `op` one thread executes in one launch; `mixed_with` is the
// pair's first op when `op` runs in a mixed pair (op itself when it is the first).
uint64_t ops_per_thread(const ComputeOp& op, int ilp, uint64_t iters,
                        const ComputeOp* mixed_with = nullptr);

// ---- Little's law ----

// Latency (cycles) implied by `in_flight` independent warp-instructions per SM sustaining
// `warp_insts_per_clk` per SM: L = N / X.
double littles_law_latency(double in_flight, double warp_insts_per_clk);
// Independent warp-instructions needed per SM to sustain `warp_insts_per_clk` at `latency`.
double littles_law_in_flight(double latency_cycles, double warp_insts_per_clk);

// ---- backend contract ----

struct ComputeLaunch {
  std::string op;
  std::string mix;  // second op of a mixed pair, or empty
  int ilp = 1;
  int warps_per_sm = 0;   // 0: as many as fit
  bool latency = false;   // one block of `block_threads` (default one warp) on one SM
  int block_threads = 0;  // 0: backend's choice
  uint64_t iters = 0;     // loop iterations
};

struct ComputeTiming {
  double span_ns = 0;               // first block start to last block end
  std::optional<double> clock_mhz;  // cycles / ns on the SMs during the loop
  double cycles_per_block = 0;      // median over blocks of the loop's cycles
  uint64_t threads = 0;             // launched
  int sms = 0;                      // SMs the launch covers
  int warps_per_sm = 0;
  bool check_ok = true;  // every thread wrote the same, non-sentinel value
  std::string check;     // what the host check saw
  // Operations of `op` one thread ran, where the backend's body differs from the CUDA
  // generator's (OpenCL); 0: ops_per_thread() holds.
  uint64_t ops_per_thread = 0;
  // Per-SM windows (sm_windows): the SM cycles and ns from each SM's first block start to
  // its last block end, summed over SMs; 0 where the kernel does not record them. Throughput
  // per clock is the launch's operations over sm_cycles: counted by the SMs' own clocks over
  // the time they held the work, it needs no wall clock and cannot exceed what an SM issues.
  double sm_cycles = 0, sm_ns = 0;
  // The highest clock the backend has seen on the device so far, where it tracks one
  // (Vulkan); a figure whose clock_mhz is far below it ran at a low clock and says so.
  std::optional<double> clock_peak_mhz;
  // What the figure says about the counter that gave clock_mhz, where that counter was not
  // validated by this project (OpenCL on AMD); empty elsewhere.
  std::string clock_note;
  // What the backend says about what it timed, where that differs from the table's form
  // (Vulkan's matrix units: the shape the driver offers); empty elsewhere.
  std::string note;
};

// One block's record from a CUDA compute kernel: the SM it ran on, its clock64 at the loop's
// start (low 48 bits), the loop's cycles, and %globaltimer before and after.
struct BlockClock {
  int sm = 0;
  uint64_t c0 = 0;  // low 48 bits of clock64
  uint64_t cycles = 0;
  uint64_t t0_ns = 0, t1_ns = 0;
};
struct SmWindows {
  double cycles = 0, ns = 0;  // summed over SMs
  int sms = 0;
};
// Each SM's window: from its earliest block start to its latest block end, in its own clock
// (clock64 is per SM: windows are never compared across SMs; the 48-bit start wraps).
SmWindows sm_windows(const std::vector<BlockClock>& blocks);
// The word a kernel stores in tim[4b+3]: SM id in the top 16 bits, clock64's low 48 below.
constexpr uint64_t pack_sm_clock(uint32_t sm, uint64_t c0) {
  return (uint64_t(sm) << 48) | (c0 & ((uint64_t(1) << 48) - 1));
}

// SASS of a generated kernel's timed loop (the largest backward-branch body).
struct LoopSass {
  bool read = false;                   // the disassembler ran
  std::map<std::string, int> opcodes;  // full opcode (with modifiers) -> count in the loop
  int loop_instructions = 0;
  // Ops of the op one iteration of the loop counts, where the backend's body differs from
  // the CUDA generator's (OpenCL); 0: ops_per_thread(op, ilp, 1) holds.
  int ops_per_iteration = 0;
};

// Counts `expect` prefixes among opcodes: "FFMA" matches "FFMA" and "FFMA.FTZ".
int count_opcodes(const LoopSass& s, const std::vector<std::string>& expect);
// Parses `cuobjdump -sass` text: kernel name -> its loop.
std::map<std::string, LoopSass> parse_sass_loops(const std::string& sass);
// "; loop: LDS x16, BRA x1, ..." (the 8 most frequent opcodes) of `kernel`'s loop in `loops`,
// for a memory figure's instruction after its load; empty where the kernel has no loop.
std::string loop_listing(const std::map<std::string, LoopSass>& loops, const std::string& kernel);

class ComputeKernels : public KernelSet {
 public:
  static constexpr const char* kProbe = "compute";
  virtual ~ComputeKernels() = default;
  virtual std::string language() const = 0;  // "cuda" | "opencl" | "glsl"
  virtual Support supports(const ComputeOp& op) = 0;
  // Compiles ahead (in parallel where the backend can) every (op, mix, ilps) listed; stops
  // starting new compiles once `cancel` (optional) is set.
  virtual void prepare(const std::vector<ComputeLaunch>&,
                       const std::atomic<bool>* /*cancel*/ = nullptr) {}
  virtual ComputeTiming run(const ComputeLaunch& l) = 0;
  // The timed loop's SASS, where the backend can read it.
  virtual LoopSass sass(const ComputeLaunch&) { return {}; }
  // The instruction timed where no machine code is read (Vulkan: the SPIR-V op); empty
  // where the SASS names it or nothing does.
  virtual std::string instruction(const ComputeOp&) { return {}; }
  // The shortest timed launch worth making, ms (0: the probe's target stands). Vulkan on a
  // GPU: 10, to keep the GPU busy enough that its driver keeps the clock up.
  virtual double min_launch_ms() const { return 0; }
  // Ops beyond the catalogue this device offers (registered with register_compute_op), run
  // after the table's own: Vulkan's cooperative-matrix shapes that no mma row times.
  virtual std::vector<std::string> extra_ops() const { return {}; }
};

// ---- result model ----

struct ComputeFigure {
  std::string op, mix;  // mix: second op of a mixed pair
  std::string label, klass;
  Status status;
  int ilp = 1;
  int warps_per_sm = 0;
  std::optional<Summary> ops_per_clk_sm;      // thread-instructions of `op` per clock per SM
  std::optional<Summary> mix_ops_per_clk_sm;  // of `mix`
  std::optional<Summary> ops_per_s;           // GPU-wide, thread-instructions/s
  std::optional<double> flops_per_op;
  std::optional<double> peak_per_clk_sm;
  std::optional<double> fraction_of_peak;
  std::optional<Summary> latency_cycles;  // dependent chain, one warp
  // The same in nanoseconds, only where no clock is known at all (Vulkan without a shader
  // clock or a reported clock): cycles are then unknown, never 0.
  std::optional<Summary> latency_ns;
  std::optional<double> clock_mhz;
  // "measured" (clock64 against %globaltimer in the kernel), "reported" (the driver's
  // maximum clock, OpenCL: per-clock figures then assume the GPU ran at it) or "none" (no
  // clock: ops/s and ns only, no per-clock figure).
  std::string clock_source;
  std::vector<std::string> opcodes;          // loop opcodes, most frequent first ("FFMA x512")
  std::vector<std::string> latency_opcodes;  // the latency loop's (one chain), where read
  std::string instruction;                   // ComputeKernels::instruction, where no SASS
  std::optional<double> sass_per_op;         // intended SASS instructions per counted op
  bool missing_instruction = false;          // loop lacks the intended instruction
  std::optional<double> implied_latency;     // Little's law from the sweep
  // Compiled away by construction (ComputeOp::elided_to): the loop holds no instruction of
  // the op, so it has no rate; `note` says why.
  bool compiled_away = false;
  std::string note;
};

struct ComputeProbeResult {
  static constexpr const char* kProbe = "compute";
  Status status;
  std::string language;
  int sms = 0;
  std::optional<double> clock_mhz;  // median over the table
  std::string clock_source;         // as in ComputeFigure
  std::string peak_source;
  std::vector<ComputeFigure> table;  // throughput + latency per instruction
  std::vector<ComputeFigure> sweep;  // ILP x occupancy
  std::vector<ComputeFigure> mixed;  // pairs
  std::vector<ComputeFigure> sync;   // __syncthreads against block size (warps_per_sm = warps)
  double wall_seconds = 0;
};

// What a figure's GPU-wide rate counts: floating-point operations (FLOP), integer (or other
// non-floating) operations (OP: IMAD's multiply and add, dp4a's 4 multiplies and 4 adds, s8
// tensor products), or plain instructions (one op per instruction: moves, warp ops, ...).
enum class RateKind { flop, op, inst };
RateKind rate_kind(const ComputeFigure& f);
// The unit of the GPU-wide rate in tera: "TFLOP/s", "TOP/s" or "Tinst/s".
std::string rate_unit(const ComputeFigure& f);
// The GPU-wide rate in that unit (ops_per_s x flops_per_op / 1e12, or instructions / 1e12).
std::optional<double> rate_tera(const ComputeFigure& f);

// ---- the matrix units through VK_KHR_cooperative_matrix (model_coopmat.cpp) ----

// A component type of a cooperative matrix, as VkComponentTypeKHR names them.
enum class CoopType {
  f16,
  f32,
  f64,
  s8,
  s16,
  s32,
  s64,
  u8,
  u16,
  u32,
  u64,
  bf16,
  e4m3,
  e5m2,
  other
};
CoopType coop_type_from_vk(uint32_t vk_component_type);
std::string coop_type_name(CoopType t);    // "f16", "bf16", "e4m3", "s8", ...
bool coop_type_is_float(CoopType t);       // f16, bf16, f32, f64, e4m3, e5m2
bool coop_type_is_signed_int(CoopType t);  // s8, s16, s32
// One entry of vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR: A is M x K, B K x N, C and
// the result M x N; scope as VkScopeKHR (3: subgroup).
struct CoopMatShape {
  uint32_t m = 0, n = 0, k = 0;
  CoopType a = CoopType::other, b = CoopType::other, c = CoopType::other, result = CoopType::other;
  bool saturating = false;
  uint32_t scope = 3;
  std::string name() const;  // "16x8x16 f16*f16+f32"
};
// The listed entry that states what the table's op `op` (mma.f16, mma.s8, ...) times: its
// types, subgroup scope, no saturation, and the shape of CUDA's mma.sync (so that one MulAdd
// is one of CUDA's ops); why none otherwise (the limit, and what the driver lists).
// Where no entry has CUDA's shape, one with its K and a multiple of its M x N stands in: `note`
// says so (its MulAdd is that many of CUDA's operations in the rate; the latency is one
// MulAdd's).
// no_form: the API has no form of the op at all (TF32, 2:4 sparsity), whatever the device
// lists, so `why` stands even where the device lists nothing.
struct CoopMatChoice {
  std::optional<CoopMatShape> shape;
  std::string why, note;
  bool no_form = false;
};
CoopMatChoice coop_matrix_for(const std::string& op, const std::vector<CoopMatShape>& listed);
// The row of one listed entry beyond the mma rows: "coopmat.f16_f32_16x16x16" (A and B's type
// where they are one, else both; C's; M x N x K), class tensor; one MulAdd is one op of it,
// 2 x M x N x K / subgroup flops per invocation; on NVIDIA its SASS must hold `sass_expect`.
std::string coop_matrix_op_name(const CoopMatShape& s);
ComputeOp coop_matrix_op(const CoopMatShape& s, uint32_t subgroup_size);
// Whether this project can write a SPIR-V module for the entry (its types), and why not.
Support coop_matrix_writable(const CoopMatShape& s);
// The SPIR-V module (1.3, SPV_KHR_cooperative_matrix) of one timed kernel: each subgroup runs
// `ilp` independent accumulators through iters x steps_per_iter MulAdds each (push constants
// {uint iters; uint zero; uint kept}, zero = 0 at run time) from C = 3: integers A = B = 1 (C wraps
// exactly); floats A = B = 2^coop_matrix_operand_log2, whose products leave C at 3, or for FP8
// B alternately +1 and -1 (C goes 3, 3 + K, 3); then the first `kept` subgroups store every
// accumulator, as f32 (f16, bf16, f32), f64 or 32-bit integers, row-major at element
// ((workgroup x subgroups + subgroup) x ilp + chain) x M x N of binding 0.
// Binding 1 takes each subgroup's clocks around the loop, kCoopMatClockWords words: the SM's
// clock (OpReadClockKHR, subgroup scope) before and after, the device's (device scope) before
// and after, each low word first; zeros for a clock the module does not read.
constexpr uint32_t kCoopMatClockWords = 8;
struct CoopMatKernel {
  CoopMatShape shape;
  int ilp = 1;
  int steps_per_iter = 8;                             // even
  uint32_t local = 32;                                // workgroup size
  bool subgroup_clock = false, device_clock = false;  // VK_KHR_shader_clock's two
};
std::vector<uint32_t> coop_matrix_spirv(const CoopMatKernel& k);
// Whether B alternates +1 and -1 (FP8 operands), and the power of two A and B hold otherwise
// (floats: small enough that K products leave C at 3; 0 for integers).
bool coop_matrix_alternates(const CoopMatShape& s);
int coop_matrix_operand_log2(const CoopMatShape& s);
// Bytes one stored element takes (4, or 8 for f64 accumulators).
uint32_t coop_matrix_store_bytes(const CoopMatShape& s);
// The value every stored element holds after `steps` MulAdds of a chain (integers wrap at 32
// bits), as the stored word(s) read on the host: f32 bits, f64 bits or the integer.
uint64_t coop_matrix_expected(const CoopMatShape& s, uint64_t steps);

void to_json(nlohmann::json& j, const ComputeFigure& f);
void from_json(const nlohmann::json& j, ComputeFigure& f);
void to_json(nlohmann::json& j, const ComputeProbeResult& r);
void from_json(const nlohmann::json& j, ComputeProbeResult& r);

}  // namespace gd
