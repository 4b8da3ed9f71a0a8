# Installing like any tool (issue 22): `cmake --install` puts the binary in bin/, the reference
# database `reference list` and `compare --reference` read in share/gpudissect/reference (the
# binary looks for it at <exe dir>/../share/gpudissect/reference: find_reference_dir), the JSON
# Schemas in share/gpudissect/schema and a man page made from --help in share/man/man1; CPack
# makes a .deb of the same tree (tests/install/test_deb.sh installs and runs it).
include(GNUInstallDirs)

install(TARGETS gpudissect RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/reference/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gpudissect/reference
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/schema/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gpudissect/schema
        FILES_MATCHING PATTERN "*.schema.json")
# The lookup is relative to the executable; other layouts need GD_REFERENCE_DIR.
if(NOT CMAKE_INSTALL_BINDIR STREQUAL "bin" OR NOT CMAKE_INSTALL_DATADIR STREQUAL "share")
  message(WARNING "gpudissect: the installed binary finds its reference data only at "
                  "<prefix>/bin/../share/gpudissect/reference; set GD_REFERENCE_DIR at run time")
endif()

# ---- the man page, from --help at build time (help2man) ----
find_program(GD_HELP2MAN help2man)
if(GD_HELP2MAN)
  set(gd_man ${CMAKE_CURRENT_BINARY_DIR}/gpudissect.1)
  add_custom_command(
    OUTPUT ${gd_man}.gz
    COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/man_page.sh ${GD_HELP2MAN}
            $<TARGET_FILE:gpudissect> ${gd_man}
    DEPENDS gpudissect ${PROJECT_SOURCE_DIR}/cmake/man_page.sh
    COMMENT "help2man: gpudissect.1 from gpudissect --help"
    VERBATIM)
  add_custom_target(gpudissect_man ALL DEPENDS ${gd_man}.gz)
  install(FILES ${gd_man}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "gpudissect: help2man not found, no man page (scripts/install-deps.sh installs it)")
endif()

# ---- the Debian package: cpack -G DEB in the build folder ----
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpudissect)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU microbenchmarks: caches, memory, compute, links; fleet health checks")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "gpudissect measures a GPU's cache hierarchy, memory and link bandwidths, compute "
       "rates, front end and atomics through CUDA, OpenCL or Vulkan, writes a report, and "
       "judges fleets of GPUs against each other or against a baseline.")
set(GD_PACKAGE_CONTACT "gpudissect maintainers <gpudissect@localhost>"
    CACHE STRING "The .deb's Maintainer field")
set(CPACK_PACKAGE_CONTACT "${GD_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_STRIP_FILES ON)
# Depends from the libraries the binary links (dpkg-shlibdeps): the OpenCL ICD loader, the
# Vulkan loader, MPI, the C++ runtime. CUDA adds none: the runtime is linked statically and
# the driver (libcuda, NVML) and the toolkit's NVRTC are opened at run time (on a node without
# NVRTC only the kernels compiled at run time fail, saying so). The CUDA library folder is
# still marked private for dpkg-shlibdeps, so that nothing found there becomes a dependency.
find_program(GD_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(GD_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  if(TARGET gpudissect_cuda AND CUDAToolkit_LIBRARY_DIR)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR})
  endif()
else()
  set(gd_deps "libc6, libstdc++6, libgcc-s1")
  if(TARGET gpudissect_opencl)
    string(APPEND gd_deps ", ocl-icd-libopencl1 | libopencl1")
  endif()
  if(TARGET gpudissect_vulkan)
    string(APPEND gd_deps ", libvulkan1")
  endif()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${gd_deps}")
endif()
# A device driver is the user's choice (PoCL, Mesa, NVIDIA's): suggested, not pulled in.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "opencl-icd, mesa-vulkan-drivers, gnuplot-nox, openmpi-bin")
include(CPack)
