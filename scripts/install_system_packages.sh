#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the tests and the last notebook need:
# graphviz (the `dot` program), the Arm cross toolchain and QEMU (the C exporter's proof),
# the full Fashion-MNIST set (full-scale training tests) and Chromium (the browser test).
set -euo pipefail
packages=(bubblewrap graphviz gcc make gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
          dataset-fashion-mnist chromium chromium-driver)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: all present"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system packages missing (${missing[*]}) and apt-get is not available: install them with your package manager" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
