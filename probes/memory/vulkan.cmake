# The memory probe's chase, one module per load, each with the shader clock
# (VK_KHR_shader_clock) and without: a module that declares the capability cannot be loaded
# on a device that lacks it.
foreach(load ca cg uniform texel)
  string(TOUPPER ${load} upper)
  gd_vulkan_shader(mem_chase_${load} mem_chase.comp -DGD_LOAD_${upper}=1)
  gd_vulkan_shader(mem_chase_${load}_clock mem_chase.comp -DGD_LOAD_${upper}=1 -DGD_CLOCK=1)
endforeach()
gd_vulkan_shader(mem_chase_uniform_std430 mem_chase.comp -DGD_LOAD_UNIFORM=1 -DGD_FLAT=1)
gd_vulkan_shader(mem_chase_uniform_std430_clock mem_chase.comp -DGD_LOAD_UNIFORM=1 -DGD_FLAT=1
                 -DGD_CLOCK=1)
gd_vulkan_shader(mem_fill mem_fill.comp)
