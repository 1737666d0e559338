#!/usr/bin/env bash
# scripts/setup.sh [--tests] [BUILD_DIR]
#   Installs the Debian 12 packages Hindsight needs that are missing (with --tests, also what
#   the test suites use), then configures and builds BUILD_DIR (default: build/). Says what it
#   does on stderr. Run by run.sh and test.sh; run it, do not source it.
# scripts/setup.sh --install PACKAGE...
#   Installs just these packages if missing (the bench scripts' GNU gdbserver).
set -euo pipefail

HS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# To build: compiler, build system, the libraries meson finds, Valgrind's headers and static
# core libraries (the dbt recorder; gcc-multilib builds its i386 twin), Catch2 (the test
# programs build with everything else). To run the demo: GDB.
BUILD_PACKAGES=(
  g++ meson ninja-build pkg-config
  libboost-dev libfmt-dev libcli11-dev nlohmann-json3-dev libzydis-dev libdw-dev libunwind-dev valgrind catch2
  gcc-multilib gdb
)
# Only the tests use these: clang and its runtime for the fuzzer, strace for the test of a server
# that is itself traced, the JSON Schema check of triage reports and a browser for their page.
TEST_PACKAGES=(clang libclang-rt-14-dev strace python3-jsonschema chromium-headless-shell libc6-dbg
  # The VM lane (test/vm): QEMU, Debian's own kernel and a static busybox for the guest, and
  # 32-bit compilers for what runs there; GDB's testsuite, DejaGnu and GNU gdbserver for its
  # -m32 conformance run.
  qemu-system-x86 linux-image-amd64 busybox-static g++-multilib gdb-source dejagnu expect gdbserver
  # LLDB as a client (end-to-end), and debootstrap for the client lanes' newer Debian roots
  # and the container lane's Debian 12 root; podman and runc run that lane (test/containers).
  lldb debootstrap podman runc
  # pwntools, a script that runs `gdbserver` from PATH (its gdb.debug drives the server in e2e).
  python3-pwntools
  # The Debian packages (test/package): building them (debhelper, help2man for the man pages,
  # bash-completion's pkg-config file, ccache across CI runs), lintian, and reading the man
  # pages they install.
  dpkg-dev debhelper help2man bash-completion ccache lintian man-db bsdextrautils git)

say() { echo "setup: $*" >&2; }

missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

install_packages() {
  local missing
  mapfile -t missing < <(missing_packages "$@")
  if ((${#missing[@]} == 0)); then
    say "nothing to install ($# packages checked)"
    return 0
  fi
  local as_root=()
  if [[ $(id -u) != 0 ]]; then
    if ! command -v sudo >/dev/null; then
      say "need root to install ${missing[*]}: run as root, or install them, or install sudo"
      return 1
    fi
    as_root=(sudo)
  fi
  say "installing ${missing[*]} (apt-get${as_root:+ through sudo})"
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
  local dir=$1
  if [[ ! -f $dir/build.ninja ]]; then
    say "configuring $dir (meson)"
    meson setup "$dir" "$HS_ROOT" >/dev/null
  fi
  say "building $dir (ninja)"
  ninja -C "$dir" >/dev/null || ninja -C "$dir"
}

main() {
  if [[ ${1:-} == --install ]]; then
    shift
    install_packages "$@"
    return
  fi
  local packages=("${BUILD_PACKAGES[@]}")
  if [[ ${1:-} == --tests ]]; then
    shift
    packages+=("${TEST_PACKAGES[@]}")
  fi
  install_packages "${packages[@]}"
  build "${1:-$HS_ROOT/build}"
}

main "$@"
