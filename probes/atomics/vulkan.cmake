# Throughput on a storage buffer or workgroup memory, add or CAS, and the CAS ping-pong
# through either.
foreach(space global shared)
  set(flag "")
  if(space STREQUAL "shared")
    set(flag -DGD_SHARED)
  endif()
  gd_vulkan_shader(atomics_${space}_add atomics.comp ${flag})
  gd_vulkan_shader(atomics_${space}_cas atomics.comp ${flag} -DGD_CAS)
  gd_vulkan_shader(atomics_pingpong_${space} atomics_pingpong.comp ${flag})
endforeach()
