# The Vulkan backend (issue 13): built when the loader (headers + library) and a GLSL to
# SPIR-V compiler (glslangValidator) are found; quietly left out otherwise, as OpenCL is.
# Shaders are compiled at build time and embedded in the binary (generated/vulkan_shaders.hpp).
option(GD_WITH_VULKAN "Build the Vulkan backend when the loader and glslangValidator are found" ON)
if(NOT GD_WITH_VULKAN)
  return()
endif()
find_package(Vulkan QUIET)
# /opt/devdeps: where the GPU machine unpacks carried Debian packages (scripts/device_vulkan.sh).
find_program(GD_GLSLANG glslangValidator HINTS /opt/devdeps/usr/bin)
if(NOT Vulkan_FOUND)
  message(STATUS "gpudissect: Vulkan loader/headers not found, Vulkan backend not built")
  return()
endif()
if(NOT GD_GLSLANG)
  message(STATUS "gpudissect: glslangValidator not found, Vulkan backend not built")
  return()
endif()

set(GD_VK_SHADER_DIR ${CMAKE_CURRENT_SOURCE_DIR}/backends/vulkan/shaders)
set(GD_VK_SPV_DIR ${CMAKE_CURRENT_BINARY_DIR}/generated/spirv)
file(MAKE_DIRECTORY ${GD_VK_SPV_DIR})
set(GD_VK_INCLUDES ${GD_VK_SHADER_DIR}/chase_common.glsl ${GD_VK_SHADER_DIR}/stream_common.glsl)
set(GD_VK_SPV_FILES "")
# gd_vulkan_shader(<module name> <source> [defines...]): one SPIR-V module.
function(gd_vulkan_shader name source)
  set(spv ${GD_VK_SPV_DIR}/${name}.spv)
  add_custom_command(
    OUTPUT ${spv}
    COMMAND ${GD_GLSLANG} -V --target-env vulkan1.1 ${ARGN} -o ${spv}
            ${GD_VK_SHADER_DIR}/${source}
    DEPENDS ${GD_VK_SHADER_DIR}/${source} ${GD_VK_INCLUDES}
    COMMENT "glslangValidator ${source} -> ${name}.spv")
  set(GD_VK_SPV_FILES ${GD_VK_SPV_FILES} ${spv} PARENT_SCOPE)
endfunction()

# Chase shaders twice: with the shader clock (VK_KHR_shader_clock) and without it, since a
# module that declares the capability cannot be loaded on a device that lacks it.
foreach(path global uniform shared texel)
  gd_vulkan_shader(chase_${path} chase_${path}.comp)
  gd_vulkan_shader(chase_${path}_clock chase_${path}.comp -DGD_CLOCK=1)
endforeach()
foreach(kernel stream_read stream_write stream_copy buffer_fill buffer_sum frontend_empty)
  gd_vulkan_shader(${kernel} ${kernel}.comp)
endforeach()
foreach(width 4 8 16)
  gd_vulkan_shader(shared_read_${width} shared_read.comp -DGD_WIDTH=${width})
endforeach()
# The compute probe: one module per (op, ILP), compute.comp with -DGD_OP_<op> -DGD_ILP=<n>
# (module compute_<op>_ilp<n>; op names with '_' for '.'). Separate modules rather than
# specialization constants because an op's module declares its capabilities (Float64,
# Float16, subgroup operations): a device that lacks one never loads that module. The list
# must match GD_VK_COMPUTE_OPS in backends/vulkan/compute_vk.cpp.
set(GD_VK_COMPUTE_OPS fp32_fma fp32_add fp32_mul fp64_fma fp64_add fp64_mul fp16x2_fma
    fp16x2_add fp16x2_mul int32_add int32_mul int32_mad warp_shfl_idx warp_shfl_xor
    warp_ballot warp_redux)
foreach(op IN LISTS GD_VK_COMPUTE_OPS)
  foreach(ilp 1 2 4 8)
    gd_vulkan_shader(compute_${op}_ilp${ilp} compute.comp -DGD_OP_${op} -DGD_ILP=${ilp})
  endforeach()
endforeach()
# The atomics probe: throughput on a storage buffer or workgroup memory, add or CAS, and the
# CAS ping-pong through either.
foreach(space global shared)
  set(flag "")
  if(space STREQUAL "shared")
    set(flag -DGD_SHARED)
  endif()
  gd_vulkan_shader(atomics_${space}_add atomics.comp ${flag})
  gd_vulkan_shader(atomics_${space}_cas atomics.comp ${flag} -DGD_CAS)
  gd_vulkan_shader(atomics_pingpong_${space} atomics_pingpong.comp ${flag})
endforeach()

set(GD_VK_EMBED ${CMAKE_CURRENT_BINARY_DIR}/generated/vulkan_shaders.hpp)
string(REPLACE ";" " " GD_VK_SPV_WORDS "${GD_VK_SPV_FILES}")  # one argument; the script splits it
add_custom_command(
  OUTPUT ${GD_VK_EMBED}
  COMMAND ${CMAKE_COMMAND} -DOUT=${GD_VK_EMBED} "-DSPV_FILES=${GD_VK_SPV_WORDS}"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_spirv.cmake
  DEPENDS ${GD_VK_SPV_FILES} cmake/embed_spirv.cmake
  COMMENT "Embedding Vulkan SPIR-V modules")

add_library(gpudissect_vulkan STATIC backends/vulkan/vulkan_context.cpp
  backends/vulkan/vulkan_device.cpp backends/vulkan/bandwidth_vk.cpp backends/vulkan/compute_vk.cpp
  backends/vulkan/atomics_vk.cpp backends/vulkan/frontend_vk.cpp
  backends/vulkan/kernel_table.cpp backends/vulkan/gpu_clock.cpp ${GD_VK_EMBED})
target_include_directories(gpudissect_vulkan PUBLIC backends/vulkan
                           PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
target_link_libraries(gpudissect_vulkan PUBLIC gpudissect_core PRIVATE Vulkan::Vulkan)
# Vulkan structs are written {sType} and the rest zero-filled, as the API intends.
target_compile_options(gpudissect_vulkan PRIVATE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wno-missing-field-initializers>)
list(APPEND GD_BACKENDS vulkan)
