// The compute table's mma rows through VK_KHR_cooperative_matrix: each op runs the entry of
// the driver's list with its types and CUDA's shape (coop_matrix_for), in a SPIR-V module
// written at run time (coop_matrix_spirv), timed and checked as the other Vulkan rows are.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compute/compute.hpp"
#include "gpudissect/build_once.hpp"
#include "vulkan_context.hpp"

namespace gd::vulkan {

class CoopMatRunner {
 public:
  CoopMatRunner(Context& ctx, const DeviceInfo& info) : ctx_(ctx), info_(info) {}
  // The mma.* rows (not wgmma, which the caller refuses with its own reason).
  static bool handles(const ComputeOp& op);
  // Registers a row (coop_matrix_op) for every listed subgroup-scope entry the module can be
  // written for and no mma row takes; returns their names (ComputeKernels::extra_ops).
  std::vector<std::string> register_listed();
  Support supports(const ComputeOp& op) const;
  std::string instruction(const ComputeOp& op) const;
  // The same with the driver's statistics of the launch's pipeline, where it captures them.
  std::string instruction(const ComputeOp& op, const ComputeLaunch& l, uint32_t local);
  // Builds the pipeline (and its machine code, where the context keeps it) ahead of the run.
  void prepare(const ComputeLaunch& l, uint32_t local);
  // One timed launch of `groups` workgroups of `local`; prepare_clock() brings the GPU's clock
  // up before the timed dispatch (after the pipeline's untimed first one).
  ComputeTiming run(const ComputeLaunch& l, uint32_t local, uint32_t groups, int units,
                    const std::function<void()>& prepare_clock);
  LoopSass sass(const ComputeLaunch& l, uint32_t local);

 private:
  // MulAdds of one chain per loop iteration (even: B alternates sign), ~16 in the body.
  static int steps_per_iteration(int ilp) { return std::max(2, 16 / std::max(1, ilp)); }
  // CUDA's thread-instructions one MulAdd of the entry is (1 for CUDA's own shape).
  double ops_per_muladd(const ComputeOp& op, const CoopMatShape& s) const;
  uint32_t subgroup_size() const { return std::max<uint32_t>(1, ctx_.facts().subgroup_size); }
  CoopMatShape shape_of(const ComputeOp& op) const;
  Pipeline& built(const ComputeOp& op, int ilp, uint32_t local);
  LoopSass machine_loop(const ComputeOp& op, int ilp, uint32_t local);
  void read_clocks(ComputeTiming& t, uint64_t subgroups, uint64_t rec_bytes);

  Context& ctx_;
  DeviceInfo info_;
  BuildOnce<std::unique_ptr<Pipeline>> pipelines_;  // by op, ILP and workgroup size
  std::map<const Pipeline*, bool> warmed_;
  Buffer out_;
  Buffer rec_;  // binding 1: each subgroup's clocks
};

}  // namespace gd::vulkan
