# Chase shaders twice: with the shader clock (VK_KHR_shader_clock) and without it, since a
# module that declares the capability cannot be loaded on a device that lacks it.
foreach(path global uniform shared texel)
  gd_vulkan_shader(chase_${path} chase_${path}.comp)
  gd_vulkan_shader(chase_${path}_clock chase_${path}.comp -DGD_CLOCK=1)
endforeach()
