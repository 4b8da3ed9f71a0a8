# Throughput on a storage buffer or workgroup memory, add or CAS, and the CAS and exchange
# ping-pongs through either (release/acquire through a storage buffer), each also with the
# shader clock (VK_KHR_shader_clock) for its cycles.
foreach(space global shared)
  set(flag "")
  if(space STREQUAL "shared")
    set(flag -DGD_SHARED)
  endif()
  gd_vulkan_shader(atomics_${space}_add atomics.comp ${flag})
  gd_vulkan_shader(atomics_${space}_cas atomics.comp ${flag} -DGD_CAS)
  gd_vulkan_shader(atomics_pingpong_${space} atomics_pingpong.comp ${flag})
  gd_vulkan_shader(atomics_pingpong_${space}_clock atomics_pingpong.comp ${flag} -DGD_CLOCK=1)
  gd_vulkan_shader(atomics_pingpong_${space}_exch atomics_pingpong.comp ${flag} -DGD_MODE=1)
  gd_vulkan_shader(atomics_pingpong_${space}_exch_clock atomics_pingpong.comp ${flag} -DGD_MODE=1
                   -DGD_CLOCK=1)
  # Float add (VK_EXT_shader_atomic_float) on either.
  gd_vulkan_shader(atomics_${space}_add_f32 atomics.comp ${flag} -DGD_F32)
endforeach()
gd_vulkan_shader(atomics_pingpong_global_ra atomics_pingpong.comp -DGD_MODE=2)
gd_vulkan_shader(atomics_pingpong_global_ra_clock atomics_pingpong.comp -DGD_MODE=2 -DGD_CLOCK=1)
# Storage buffer only, as the probe's plan has them: signed min / max, 64-bit integer add
# (VK_KHR_shader_atomic_int64), double add, and the add at workgroup scope.
gd_vulkan_shader(atomics_global_min atomics.comp -DGD_MIN)
gd_vulkan_shader(atomics_global_max atomics.comp -DGD_MAX)
gd_vulkan_shader(atomics_global_add_u64 atomics.comp -DGD_U64)
gd_vulkan_shader(atomics_global_add_f64 atomics.comp -DGD_F64)
gd_vulkan_shader(atomics_global_add_cta atomics.comp -DGD_SCOPE_WORKGROUP)
