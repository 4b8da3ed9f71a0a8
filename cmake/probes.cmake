# A probe is a folder: probes/<name>/ holds its model, measurement, registry entry, report
# section and its kernels for each API. gd_add_probe(<name>) adds the folder's files to the
# layer each belongs to, for the backends being built:
#   model.cpp, model_*.cpp, figures.cpp -> gpudissect_core (GPU-free: result model, figures, JSON)
#   run.cpp, run_*.cpp, entry.cpp  -> gpudissect_probe_entries (measurement, registry entry)
#   report.cpp                     -> gpudissect_report  (its report section)
#   cuda*.cu, cuda*.cpp            -> gpudissect_cuda
#   opencl*.cpp, *.cl              -> gpudissect_opencl  (.cl embedded as string literals)
#   vulkan*.cpp, vulkan.cmake      -> gpudissect_vulkan  (vulkan.cmake lists its shaders)
# gd_finish_probes() then embeds the collected OpenCL and SPIR-V kernels.
function(gd_add_probe name)
  set(dir ${PROJECT_SOURCE_DIR}/probes/${name})
  if(NOT IS_DIRECTORY ${dir})
    message(FATAL_ERROR "gd_add_probe: no folder probes/${name}")
  endif()
  foreach(layer model:gpudissect_core figures:gpudissect_core run:gpudissect_probe_entries
                entry:gpudissect_probe_entries
                report:gpudissect_report)
    string(REPLACE ":" ";" pair ${layer})
    list(GET pair 0 file)
    list(GET pair 1 target)
    if(EXISTS ${dir}/${file}.cpp)
      target_sources(${target} PRIVATE ${dir}/${file}.cpp)
    endif()
  endforeach()
  # A long model or measurement is split into model_<part>.cpp and run_<part>.cpp.
  file(GLOB sources ${dir}/model_*.cpp)
  target_sources(gpudissect_core PRIVATE ${sources})
  file(GLOB sources ${dir}/run_*.cpp)
  target_sources(gpudissect_probe_entries PRIVATE ${sources})
  # A unity build (CI's sanitizer build) joins a probe's measurement files with each other
  # only: each probe's run files share private names (Ctx, ...) with other probes'.
  file(GLOB sources ${dir}/run*.cpp ${dir}/entry.cpp)
  set_source_files_properties(${sources} PROPERTIES UNITY_GROUP ${name})
  if(TARGET gpudissect_cuda)
    file(GLOB sources ${dir}/cuda*.cu ${dir}/cuda*.cpp)
    target_sources(gpudissect_cuda PRIVATE ${sources})
  endif()
  if(TARGET gpudissect_opencl)
    file(GLOB sources ${dir}/opencl*.cpp)
    file(GLOB kernels RELATIVE ${PROJECT_SOURCE_DIR} ${dir}/*.cl)
    target_sources(gpudissect_opencl PRIVATE ${sources})
    set_property(GLOBAL APPEND PROPERTY GD_CL_SOURCES ${kernels})
  endif()
  if(TARGET gpudissect_vulkan)
    file(GLOB sources ${dir}/vulkan*.cpp)
    target_sources(gpudissect_vulkan PRIVATE ${sources})
    if(EXISTS ${dir}/vulkan.cmake)
      include(${dir}/vulkan.cmake)
    endif()
  endif()
endfunction()

function(gd_finish_probes)
  set(generated ${PROJECT_BINARY_DIR}/generated)
  if(TARGET gpudissect_opencl)
    get_property(cl_sources GLOBAL PROPERTY GD_CL_SOURCES)
    set(embed ${generated}/opencl_kernels.hpp)
    add_custom_command(
      OUTPUT ${embed}
      COMMAND ${CMAKE_COMMAND} -DOUT=${embed} -DSOURCES="${cl_sources}"
              -DROOT=${PROJECT_SOURCE_DIR} -P ${PROJECT_SOURCE_DIR}/cmake/embed_cl.cmake
      DEPENDS ${cl_sources} ${PROJECT_SOURCE_DIR}/cmake/embed_cl.cmake
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      COMMENT "Embedding OpenCL kernels")
    target_sources(gpudissect_opencl PRIVATE ${embed})
  endif()
  if(TARGET gpudissect_vulkan)
    get_property(spv_files GLOBAL PROPERTY GD_VK_SPV_FILES)
    set(embed ${generated}/vulkan_shaders.hpp)
    string(REPLACE ";" " " words "${spv_files}")  # one argument; the script splits it
    add_custom_command(
      OUTPUT ${embed}
      COMMAND ${CMAKE_COMMAND} -DOUT=${embed} "-DSPV_FILES=${words}"
              -P ${PROJECT_SOURCE_DIR}/cmake/embed_spirv.cmake
      DEPENDS ${spv_files} ${PROJECT_SOURCE_DIR}/cmake/embed_spirv.cmake
      COMMENT "Embedding Vulkan SPIR-V modules")
    target_sources(gpudissect_vulkan PRIVATE ${embed})
  endif()
endfunction()
