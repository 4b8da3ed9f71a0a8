# One module per (op, ILP), compute.comp with -DGD_OP_<op> -DGD_ILP=<n> (module
# compute_<op>_ilp<n>; op names with '_' for '.'). Separate modules rather than
# specialization constants because an op's module declares its capabilities (Float64,
# Float16, Int64, subgroup operations): a device that lacks one never loads that module.
# The list must match kOps in vulkan_ops.cpp beside this file.
set(GD_VK_COMPUTE_OPS fp32_fma fp32_add fp32_mul fp64_fma fp64_add fp64_mul fp16x2_fma
    fp16x2_add fp16x2_mul int32_add int32_mul int32_mad warp_shfl_idx warp_shfl_xor
    warp_ballot warp_redux fp32_max fp64_fma_rrr fp64_fma_2reg fp64_fma_acc fp16_fma
    int32_mulhi int32_lop3 int32_shl int32_rot int32_popc int32_brev int32_clz int64_add
    int64_mul sfu_rcp sfu_rsqrt sfu_sqrt sfu_ex2 sfu_lg2 sfu_sin sfu_cos conv_f32_i32
    conv_f32_f16 conv_f64_f32 warp_shfl_up warp_shfl_down lds_chase int32_dp4a)
foreach(op IN LISTS GD_VK_COMPUTE_OPS)
  foreach(ilp 1 2 4 8)
    gd_vulkan_shader(compute_${op}_ilp${ilp} compute.comp -DGD_OP_${op} -DGD_ILP=${ilp})
  endforeach()
endforeach()
