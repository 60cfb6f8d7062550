#!/usr/bin/env bash
# Installs every Debian package clustercast builds and tests with. Idempotent: packages
# already present are skipped, so a second run costs one dpkg query.
# The CUDA toolkit is not a Debian package; CMake finds it at /usr/local/cuda when present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libfmt-dev libeigen3-dev nlohmann-json3-dev libcli11-dev libfccp-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev  # Qt6Charts needs Qt6OpenGL's CMake files
  xvfb xauth fonts-dejavu-core  # the GUI screenshot script opens the real window under Xvfb
  openmpi-bin libopenmpi-dev
  clang libclang-rt-14-dev  # the libFuzzer targets (tests/fuzz) build with clang's -fsanitize=fuzzer
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
