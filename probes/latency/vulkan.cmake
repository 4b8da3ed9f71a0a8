# Chase shaders twice: with the shader clock (VK_KHR_shader_clock) and without it, since a
# module that declares the capability cannot be loaded on a device that lacks it.
foreach(path global uniform shared texel)
  gd_vulkan_shader(chase_${path} chase_${path}.comp)
  gd_vulkan_shader(chase_${path}_clock chase_${path}.comp -DGD_CLOCK=1)
endforeach()
# The l2 path: the global chase through a `coherent` buffer (chase_global.comp says why).
gd_vulkan_shader(chase_l2 chase_global.comp -DGD_COHERENT=1)
gd_vulkan_shader(chase_l2_clock chase_global.comp -DGD_COHERENT=1 -DGD_CLOCK=1)
