# Sourced by scripts/device_setup.sh and scripts/device_vulkan.sh: the Vulkan loader set the
# device README's recipe unpacks to / (only these packages: unpacking others there can break
# the image), and NVIDIA's ICD manifest, which lives where the loader does not look.
vulkan_loaders=(libvulkan1 libglvnd0 libegl1 libopengl0 libgl1 libglx0 libgles2)

bring_vulkan_loader() {
  local p f icd
  for p in "${vulkan_loaders[@]}"; do
    for f in .devdeps/${p}_*.deb; do [[ -f $f ]] && dpkg -x "$f" /; done
  done
  ldconfig
  if [[ -z ${VK_DRIVER_FILES:-} ]]; then
    for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
      /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
      if [[ -f $icd ]]; then
        export VK_DRIVER_FILES=$icd
        break
      fi
    done
  fi
}
