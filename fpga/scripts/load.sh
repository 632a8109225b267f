#!/usr/bin/env bash
# Loads a built board design: volatile (program) or into the configuration flash (flash).
#   load.sh program|flash <board> <out-dir> [cable]
# 7-series boards use openFPGALoader (Debian package openfpgaloader; a JTAG cable on the board's
# header: the Acorn needs a Molex Pico-Lock adapter). Alveo cards are not in openFPGALoader's
# list: Vivado's hardware manager does it (hw_server and the card's JTAG: docs/boards.md).
set -euo pipefail
what=$1 board=$2 out=$3 cable=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
boards() { python3 "$here/boards.py" "$@"; }
family=$(boards get "$board" family)

case $family in
  s7)
    command -v openFPGALoader >/dev/null || { echo "load: openFPGALoader is missing (apt-get install openfpgaloader)"; exit 1; }
    [ -n "$cable" ] || cable=$(boards get "$board" default_cable)
    read -r -a args <<<"$(boards get "$board" openfpgaloader)"
    if [ "$what" = program ]; then
      exec openFPGALoader "${args[@]}" -c "$cable" "$out/$board.bit"
    else
      [ -f "$out/$board.bin" ] || { echo "load: no $out/$board.bin: run the bitstream target first"; exit 1; }
      exec openFPGALoader "${args[@]}" -c "$cable" -f "$out/$board.bin"
    fi
    ;;
  usp)
    command -v vivado >/dev/null || { echo "load: Alveo cards are loaded with Vivado's hardware manager; 'vivado' is not on PATH"; exit 1; }
    cd "$out"
    exec vivado -mode batch -nojournal -log "$what.log" -source "$here/../vivado/$what.tcl" -tclargs "$out/config.tcl" "$out"
    ;;
esac
