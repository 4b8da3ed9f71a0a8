# One module per (op, ILP), compute.comp with -DGD_OP_<op> -DGD_ILP=<n> (module
# compute_<op>_ilp<n>; op names with '_' for '.'). Separate modules rather than
# specialization constants because an op's module declares its capabilities (Float64,
# Float16, subgroup operations): a device that lacks one never loads that module. The list
# must match GD_VK_COMPUTE_OPS in vulkan.cpp beside this file.
set(GD_VK_COMPUTE_OPS fp32_fma fp32_add fp32_mul fp64_fma fp64_add fp64_mul fp16x2_fma
    fp16x2_add fp16x2_mul int32_add int32_mul int32_mad warp_shfl_idx warp_shfl_xor
    warp_ballot warp_redux)
foreach(op IN LISTS GD_VK_COMPUTE_OPS)
  foreach(ilp 1 2 4 8)
    gd_vulkan_shader(compute_${op}_ilp${ilp} compute.comp -DGD_OP_${op} -DGD_ILP=${ilp})
  endforeach()
endforeach()
