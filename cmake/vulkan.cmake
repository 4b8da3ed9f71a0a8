# The Vulkan backend: built when the loader (headers + library) and a GLSL to SPIR-V compiler
# (glslangValidator) are found; quietly left out otherwise, as OpenCL is. This file makes the
# backend's shared library (context, device, clock, kernel table) and gd_vulkan_shader();
# each probe's shaders are listed in its folder's vulkan.cmake, compiled at build time and
# embedded in the binary (generated/vulkan_shaders.hpp) by cmake/probes.cmake.
option(GD_WITH_VULKAN "Build the Vulkan backend when the loader and glslangValidator are found" ON)
if(NOT GD_WITH_VULKAN)
  return()
endif()
find_package(Vulkan QUIET)
# /opt/devdeps: where the GPU machine unpacks carried Debian packages (scripts/gpu-machine.sh --deps).
find_program(GD_GLSLANG glslangValidator HINTS /opt/devdeps/usr/bin)
if(NOT Vulkan_FOUND)
  message(STATUS "gpudissect: Vulkan loader/headers not found, Vulkan backend not built")
  return()
endif()
if(NOT GD_GLSLANG)
  message(STATUS "gpudissect: glslangValidator not found, Vulkan backend not built")
  return()
endif()

set(GD_VK_SPV_DIR ${CMAKE_CURRENT_BINARY_DIR}/generated/spirv)
file(MAKE_DIRECTORY ${GD_VK_SPV_DIR})
# gd_vulkan_shader(<module name> <source> [defines...]): one SPIR-V module from <source> in
# the folder of the vulkan.cmake that calls it (a probe's folder); it depends on every .glsl
# beside it, which is where its #include files live.
function(gd_vulkan_shader name source)
  set(spv ${GD_VK_SPV_DIR}/${name}.spv)
  file(GLOB includes ${CMAKE_CURRENT_LIST_DIR}/*.glsl)
  add_custom_command(
    OUTPUT ${spv}
    COMMAND ${GD_GLSLANG} -V --target-env vulkan1.1 ${ARGN} -o ${spv}
            ${CMAKE_CURRENT_LIST_DIR}/${source}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/${source} ${includes}
    COMMENT "glslangValidator ${source} -> ${name}.spv")
  set_property(GLOBAL APPEND PROPERTY GD_VK_SPV_FILES ${spv})
endfunction()

add_library(gpudissect_vulkan STATIC backends/vulkan/vulkan_context.cpp
  backends/vulkan/copy_pieces.cpp
  backends/vulkan/vulkan_machine_code.cpp
  backends/vulkan/vulkan_calibration.cpp
  backends/vulkan/vulkan_facts.cpp backends/vulkan/vulkan_device.cpp
  backends/vulkan/kernel_table.cpp backends/vulkan/gpu_clock.cpp)
target_include_directories(gpudissect_vulkan PUBLIC backends/vulkan
                           PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
target_link_libraries(gpudissect_vulkan PUBLIC gpudissect_core PRIVATE Vulkan::Vulkan)
# Each probe's Vulkan file keeps file-local names (kStorage, ...): never joined by a unity build.
set_target_properties(gpudissect_vulkan PROPERTIES UNITY_BUILD OFF)
# Vulkan structs are written {sType} and the rest zero-filled, as the API intends.
target_compile_options(gpudissect_vulkan PRIVATE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wno-missing-field-initializers>)
list(APPEND GD_BACKENDS vulkan)
