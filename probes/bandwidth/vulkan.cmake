foreach(kernel stream_read stream_write stream_copy stream_write_flat stream_copy_flat buffer_fill
               buffer_sum)
  gd_vulkan_shader(${kernel} ${kernel}.comp)
endforeach()
gd_vulkan_shader(stream_read_l2 stream_read.comp -DGD_COHERENT=1)
foreach(width 4 8 16)
  gd_vulkan_shader(shared_read_${width} shared_read.comp -DGD_WIDTH=${width})
endforeach()
