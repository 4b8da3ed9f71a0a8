# Chase shaders twice: with the shader clock (VK_KHR_shader_clock) and without it, since a
# module that declares the capability cannot be loaded on a device that lacks it.
foreach(path global uniform shared texel)
  gd_vulkan_shader(chase_${path} chase_${path}.comp)
  gd_vulkan_shader(chase_${path}_clock chase_${path}.comp -DGD_CLOCK=1)
endforeach()
# The l2 path: the global chase through a `coherent` buffer (chase_global.comp says why).
gd_vulkan_shader(chase_l2 chase_global.comp -DGD_COHERENT=1)
gd_vulkan_shader(chase_l2_clock chase_global.comp -DGD_COHERENT=1 -DGD_CLOCK=1)
# The address chases of the global and l2 paths (buffer device addresses), and the uniform
# chase as a plain uint array (std430 uniform block): used where the device has the feature.
foreach(clock "" _clock)
  set(def "")
  if(clock)
    set(def -DGD_CLOCK=1)
  endif()
  gd_vulkan_shader(chase_global_addr${clock} chase_global.comp -DGD_ADDRESS=1 ${def})
  gd_vulkan_shader(chase_l2_addr${clock} chase_global.comp -DGD_ADDRESS=1 -DGD_COHERENT=1 ${def})
  gd_vulkan_shader(chase_uniform_std430${clock} chase_uniform.comp -DGD_FLAT=1 ${def})
endforeach()
