// The mma rows, and a row per other listed shape, through VK_KHR_cooperative_matrix
// (vulkan_coopmat.hpp).
#include "vulkan_coopmat.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "gpu_clock.hpp"
#include "gpudissect/stats.hpp"
#include "vulkan_listing.hpp"

namespace gd::vulkan {

namespace {

constexpr uint32_t kSentinel = 0xA5A5A5A5u;

// compute.comp's push constants are not these: the module reads { uint iters; uint zero;
// uint kept; }.
struct CoopPush {
  uint32_t iters, zero, kept;
};

// Subgroups whose accumulators are stored and checked: every one's work stays live (the
// condition is a push constant), and the host reads 256 KiB (at ILP 8, 16 x 8 f32) instead of
// 35 MB a launch.
constexpr uint64_t kKeptSubgroups = 64;

}  // namespace

bool CoopMatRunner::handles(const ComputeOp& op) {
  return op.klass == "tensor" &&
         (op.name.rfind("mma.", 0) == 0 || op.name.rfind("coopmat.", 0) == 0);
}

std::vector<std::string> CoopMatRunner::register_listed() {
  const Facts& f = ctx_.facts();
  std::vector<CoopMatShape> timed;  // the entries an mma row takes
  for (const ComputeOp& op : compute_ops())
    if (handles(op))
      if (const CoopMatChoice c = coop_matrix_for(op.name, f.cooperative_matrix_shapes); c.shape)
        timed.push_back(*c.shape);
  std::vector<std::string> names;
  for (const CoopMatShape& s : f.cooperative_matrix_shapes) {
    if (!coop_matrix_writable(s).ok) continue;  // subgroup scope, no saturation, our types
    const std::string name = coop_matrix_op_name(s);
    if (std::any_of(timed.begin(), timed.end(),
                    [&](const CoopMatShape& t) { return coop_matrix_op_name(t) == name; }) ||
        std::find(names.begin(), names.end(), name) != names.end())
      continue;
    names.push_back(register_compute_op(coop_matrix_op(s, subgroup_size())).name);
  }
  return names;
}

CoopMatShape CoopMatRunner::shape_of(const ComputeOp& op) const {
  return *coop_matrix_for(op.name, ctx_.facts().cooperative_matrix_shapes).shape;
}

Support CoopMatRunner::supports(const ComputeOp& op) const {
  const Facts& f = ctx_.facts();
  if (const Support t = f.timing(); !t.ok) return t;
  const CoopMatChoice c = coop_matrix_for(op.name, f.cooperative_matrix_shapes);
  if (!c.shape) {
    // A limit of the API first: it is not a limit of this device.
    if (!c.no_form && f.cooperative_matrix_shapes.empty())
      return Support::no("no cooperative matrices: " + f.cooperative_matrix_why);
    return Support::no(c.why);
  }
  if (!f.vulkan_memory_model)
    return Support::no(
        "the device lacks vulkanMemoryModel (VK_KHR_vulkan_memory_model), which "
        "Vulkan requires of a shader with cooperative matrices");
  if (const Support w = coop_matrix_writable(*c.shape); !w.ok)
    return Support::no("the " + c.shape->name() + " entry cannot be written: " + w.reason);
  const CoopType t = c.shape->a;
  if (t == CoopType::bf16 && !f.bfloat16_cooperative_matrix)
    return Support::no(
        "the device lists a bf16 entry without VK_KHR_shader_bfloat16's "
        "shaderBFloat16CooperativeMatrix");
  if ((t == CoopType::e4m3 || t == CoopType::e5m2) && !f.float8_cooperative_matrix)
    return Support::no(
        "the device lists an FP8 entry without VK_EXT_shader_float8's "
        "shaderFloat8CooperativeMatrix");
  if ((t == CoopType::s8 || t == CoopType::u8) && !f.shader_int8)
    return Support::no("the device lacks shaderInt8 (VK_KHR_shader_float16_int8)");
  if ((t == CoopType::f16 || c.shape->c == CoopType::f16) && !f.shader_float16)
    return Support::no("the device lacks shaderFloat16 (VK_KHR_shader_float16_int8)");
  if (t == CoopType::f64 && !f.shader_float64) return Support::no("the device lacks shaderFloat64");
  return Support::yes();
}

std::string CoopMatRunner::instruction(const ComputeOp& op) const {
  if (!supports(op).ok) return {};
  return "SPIR-V OpCooperativeMatrixMulAddKHR " + shape_of(op).name() +
         " (VK_KHR_cooperative_matrix, subgroup scope)";
}

std::string CoopMatRunner::instruction(const ComputeOp& op, const ComputeLaunch& l,
                                       uint32_t local) {
  std::string s = instruction(op);
  if (s.empty() || !ctx_.facts().pipeline_executable_info) return s;
  try {  // the driver's statistics (registers), beside the figure, never in its way
    return s + executables_suffix(ctx_.device(), built(op, l.ilp, local).pipeline, true);
  } catch (const std::exception& e) {
    return s + "; no executable listing: " + e.what();
  }
}

double CoopMatRunner::ops_per_muladd(const ComputeOp& op, const CoopMatShape& s) const {
  return 2.0 * s.m * s.n * s.k / subgroup_size() / op.flops_per_op;
}

Pipeline& CoopMatRunner::built(const ComputeOp& op, int ilp, uint32_t local) {
  const std::string key = op.name + "|" + std::to_string(ilp) + "|" + std::to_string(local);
  return *pipelines_.get(key, [&] {
    CoopMatKernel k;
    k.shape = shape_of(op);
    k.ilp = ilp;
    k.steps_per_iter = steps_per_iteration(ilp);
    k.local = local;
    k.subgroup_clock = ctx_.facts().shader_clock;
    k.device_clock = ctx_.facts().shader_device_clock;
    return ctx_.pipeline_from_words(
        "cooperative matrix " + k.shape.name(), coop_matrix_spirv(k),
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER}, sizeof(CoopPush));
  });
}

LoopSass CoopMatRunner::machine_loop(const ComputeOp& op, int ilp, uint32_t local) {
  const NvCacheSass& code = ctx_.nv_sass(built(op, ilp, local));
  if (code.sass.empty()) return {};
  const auto loops = parse_sass_loops(code.sass);
  const auto found = loops.find("main");
  return found == loops.end() || found->second.loop_instructions == 0 ? LoopSass{} : found->second;
}

void CoopMatRunner::prepare(const ComputeLaunch& l, uint32_t local) {
  const ComputeOp* op = find_compute_op(l.op);
  if (op && supports(*op).ok) machine_loop(*op, l.latency ? 1 : l.ilp, local);
}

// The loop's own clocks (VK_KHR_shader_clock), where the module read them: the SM's cycles
// over the loop, and the clock the SMs ran at during it (the SM's cycles over the device
// clock's ticks, the ticks in ns from the dispatch's span), rather than one read after the
// launch: under the matrix units' load the GPU's clock falls (1815 against 1981 MHz on an
// H200), and recovers before a reading after the launch.
void CoopMatRunner::read_clocks(ComputeTiming& t, uint64_t subgroups, uint64_t rec_bytes) {
  const Facts& f = ctx_.facts();
  if (!f.shader_clock) return;
  std::vector<uint32_t> rec(rec_bytes / 4);
  ctx_.download(rec_, rec.data(), rec_bytes);
  auto word64 = [&](uint64_t sg, int j) {
    const uint32_t* r = &rec[sg * kCoopMatClockWords + 2 * j];
    return uint64_t(r[0]) | uint64_t(r[1]) << 32;
  };
  std::vector<double> cycles, ticks;
  uint64_t first = ~uint64_t{0}, last = 0;
  for (uint64_t sg = 0; sg < subgroups; ++sg) {
    cycles.push_back(double(word64(sg, 1) - word64(sg, 0)));
    ticks.push_back(double(word64(sg, 3) - word64(sg, 2)));
    first = std::min(first, word64(sg, 2));
    last = std::max(last, word64(sg, 3));
  }
  t.cycles_per_block = median(cycles);
  if (!f.shader_device_clock || last <= first || !(t.span_ns > 0)) return;
  const double ns_per_tick = t.span_ns / double(last - first);
  std::vector<double> mhz;
  for (std::size_t i = 0; i < cycles.size(); ++i)
    if (ticks[i] > 0) mhz.push_back(cycles[i] / (ticks[i] * ns_per_tick) * 1000);
  if (!mhz.empty() && t.clock_mhz) t.clock_mhz = median(mhz);
}

LoopSass CoopMatRunner::sass(const ComputeLaunch& l, uint32_t local) {
  const ComputeOp* op = find_compute_op(l.op);
  if (!op || !supports(*op).ok) return {};
  const int ilp = l.latency ? 1 : l.ilp;
  LoopSass s = machine_loop(*op, ilp, local);
  if (!s.read) return {};
  s.ops_per_iteration = static_cast<int>(steps_per_iteration(ilp) * ilp * op->insts_per_step *
                                         ops_per_muladd(*op, shape_of(*op)));
  return s;
}

// shape: pipeline, output buffer, untimed first launch, clock, timed launch, check
ComputeTiming CoopMatRunner::run(const ComputeLaunch& l, uint32_t local, uint32_t groups, int units,
                                 const std::function<void()>& prepare_clock) {
  const ComputeOp& op = *find_compute_op(l.op);
  const CoopMatChoice choice = coop_matrix_for(op.name, ctx_.facts().cooperative_matrix_shapes);
  const CoopMatShape shape = *choice.shape;
  const int ilp = l.latency ? 1 : l.ilp;
  Pipeline& p = built(op, ilp, local);
  const uint32_t subgroup = subgroup_size();
  const uint64_t subgroups = uint64_t(groups) * std::max<uint32_t>(1, local / subgroup);
  const uint64_t words_per_element = coop_matrix_store_bytes(shape) / 4;
  const uint64_t kept = std::min(subgroups, kKeptSubgroups);
  const uint64_t elements = kept * uint64_t(ilp) * shape.m * shape.n;
  const uint64_t bytes = elements * words_per_element * 4;
  if (!out_ || out_.size() < bytes)
    out_ = ctx_.buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
  const uint64_t rec_bytes = subgroups * kCoopMatClockWords * 4;
  if (!rec_ || rec_.size() < rec_bytes)
    rec_ = ctx_.buffer(rec_bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
  const std::vector<Binding> bindings{{&out_, bytes}, {&rec_, rec_bytes}};

  const int per_iteration = steps_per_iteration(ilp);
  // The probe scales the iterations to its target time (run.cpp), so they are loop trips.
  const uint64_t iters = std::clamp<uint64_t>(l.iters, 1, uint64_t(1) << 28);
  if (!warmed_[&p]) {
    warmed_[&p] = true;
    const CoopPush once{1, 0, static_cast<uint32_t>(kept)};
    ctx_.dispatch(p, bindings, &once, sizeof once, groups);
  }
  prepare_clock();
  ctx_.fill(out_, bytes, kSentinel);
  const CoopPush push{static_cast<uint32_t>(iters), 0, static_cast<uint32_t>(kept)};
  ComputeTiming t;
  t.span_ns = ctx_.dispatch(p, bindings, &push, sizeof push, groups);
  const std::optional<double> mhz = ctx_.clock().read_mhz();
  t.threads = uint64_t(groups) * local;
  t.sms = l.latency ? 1 : units;
  t.warps_per_sm =
      static_cast<int>(l.latency ? (t.threads + 31) / 32 : t.threads / uint64_t(t.sms) / 32);
  if (mhz && (l.latency || info_.compute_units > 0)) {
    t.clock_mhz = mhz;
    t.clock_peak_mhz = ctx_.clock().peak_mhz();
  }
  read_clocks(t, subgroups, rec_bytes);
  const uint64_t steps = iters * uint64_t(per_iteration);
  // The rate counts CUDA's operations; a latency is one MulAdd's, whatever its shape.
  t.ops_per_thread = static_cast<uint64_t>(double(steps) * ilp * op.insts_per_step *
                                           (l.latency ? 1.0 : ops_per_muladd(op, shape)));
  t.note = choice.note;

  // Every element of every accumulator holds the same value, computed on the host.
  std::vector<uint32_t> out(bytes / 4);
  ctx_.download(out_, out.data(), bytes);
  const uint64_t want = coop_matrix_expected(shape, steps);
  uint64_t differ = 0, unwritten = 0, first_bad = elements;
  for (uint64_t e = 0; e < elements; ++e) {
    uint64_t got = out[e * words_per_element];
    if (words_per_element == 2) got |= uint64_t(out[e * 2 + 1]) << 32;
    if (got == want) continue;
    ++differ;
    unwritten += out[e * words_per_element] == kSentinel;
    if (first_bad == elements) first_bad = e;
  }
  t.check_ok = differ == 0;
  std::ostringstream m;
  m << shape.name() << ": " << elements << " accumulator elements of " << kept << " of "
    << subgroups << " subgroups x " << ilp << " chains after " << steps << " MulAdds, expected 0x"
    << std::hex << want << std::dec;
  if (differ)
    m << "; " << differ << " differ (" << unwritten << " unwritten), the first at " << first_bad
      << " MISMATCH";
  else
    m << " (all match)";
  t.check = m.str();
  return t;
}

}  // namespace gd::vulkan
