#!/usr/bin/env bash
# Installs what Hindsight needs on Debian 12 (only what is missing), then configures and builds.
# Sourced by run.sh and test.sh; BUILD_DIR defaults to build/.
set -euo pipefail

HS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$HS_ROOT/build}

HS_PACKAGES=(
  g++ clang libclang-rt-14-dev meson ninja-build pkg-config
  libboost-dev catch2 libfmt-dev libcli11-dev nlohmann-json3-dev libzydis-dev libdw-dev libunwind-dev
  gdb gdbserver procps strace valgrind
)
# Only the tests use these: the triage report's JSON Schema check and its page in a browser.
if [[ ${HS_WITH_TEST_TOOLS:-0} == 1 ]]; then
  HS_PACKAGES+=(python3-jsonschema chromium-headless-shell)
fi

hs_install_packages() {
  local missing=()
  for p in "${HS_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  echo "setup: installing ${missing[*]}" >&2
  local sudo=()
  if [[ $(id -u) != 0 ]]; then
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

hs_build() {
  if [[ ! -f $BUILD_DIR/build.ninja ]]; then
    meson setup "$BUILD_DIR" "$HS_ROOT" >/dev/null
  fi
  ninja -C "$BUILD_DIR" >/dev/null || ninja -C "$BUILD_DIR"
}

hs_install_packages
hs_build
