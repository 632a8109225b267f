#!/usr/bin/env bash
# Installs what softgpu needs and is missing: Debian packages (apt-get, with sudo when not root)
# and the pinned Python generators in a virtual environment. Does nothing when all is present.
#
#   tools/deps.sh <venv-dir> [extra Debian packages...]   (e.g. `make fuzz` adds clang)
#   tools/deps.sh --demo <venv-dir>    only what building and running the CLI needs (`make demo`):
#                                      no QEMU and guest kernel (the VM test), no openFPGALoader
set -euo pipefail

demo_only=0
if [ "${1:-}" = "--demo" ]; then demo_only=1; shift; fi
venv=${1:?usage: deps.sh [--demo] <venv-dir> [packages...]}
shift
here=$(cd "$(dirname "$0")" && pwd)

packages=(
  build-essential cmake ninja-build ccache pkg-config python3 python3-venv
  verilator catch2 libfmt-dev libcli11-dev nlohmann-json3-dev libpng-dev libpciaccess-dev libsystemc-dev
  "$@"
)
if ((!demo_only)); then
  packages+=(
    qemu-system-x86 busybox-static cpio   # the pcie VM test (tools/vm)
    openfpgaloader                        # flashing the boards (fpga/scripts)
    valgrind                              # make bench: sim_instructions_per_cycle (callgrind)
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "deps: installing Debian packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The VM test's guest kernel: Debian's current image package, downloaded and partly unpacked.
if ((!demo_only)); then
  "$here/vm/fetch_kernel.sh" "$(dirname "$venv")/vm-kernel"
fi

# The virtual environment is rebuilt only when the pinned requirements change.
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/peakrdl" ] || ! cmp -s "$here/requirements.txt" "$stamp"; then
  echo "deps: creating Python environment in $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$stamp"
fi

