# Writes every .cl file in SOURCES into one header as raw string literals, so the
# binary carries its kernels and needs no file next to it at run time.
separate_arguments(SOURCES)
set(content "// Generated from the .cl sources; do not edit.\n#pragma once\n\nnamespace gd::opencl::kernels {\n")
foreach(src IN LISTS SOURCES)
  file(READ ${ROOT}/${src} text)
  get_filename_component(name ${src} NAME_WE)
  string(APPEND content "inline constexpr const char* ${name} = R\"GDCL(${text})GDCL\";\n")
endforeach()
string(APPEND content "}  // namespace gd::opencl::kernels\n")
file(WRITE ${OUT} "${content}")
