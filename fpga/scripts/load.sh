#!/usr/bin/env bash
# Loads a built board design: volatile (program) or into the configuration flash (flash).
#   load.sh program|flash <board> <out-dir> [cable]
# 7-series boards use openFPGALoader (Debian package openfpgaloader; a JTAG cable on the board's
# header: the Acorn needs a Molex Pico-Lock adapter). Alveo cards are not in openFPGALoader's
# list: Vivado's hardware manager does it (hw_server and the card's JTAG: docs/boards.md).
# SGPU_LOAD_DRY_RUN=1 (make ... DRY_RUN=1) prints the command instead of running it, and does
# not need the tool.
set -euo pipefail
what=$1 board=$2 out=$3 cable=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
boards() { python3 "$here/boards.py" "$@"; }
family=$(boards get "$board" family)
dry=${SGPU_LOAD_DRY_RUN:-}
case $what in program|flash) ;; *) echo "load: '$what' is neither program nor flash"; exit 2 ;; esac
need() { [ -n "$dry" ] || command -v "$1" >/dev/null || { echo "load: $2"; exit 1; }; }
run() {
  if [ -n "$dry" ]; then printf '%q ' "$@"; echo; exit 0; fi
  exec "$@"
}

case $family in
  s7)
    need openFPGALoader "openFPGALoader is missing (apt-get install openfpgaloader)"
    [ -n "$cable" ] || cable=$(boards get "$board" default_cable)
    read -r -a args <<<"$(boards get "$board" openfpgaloader)"
    if [ "$what" = program ]; then
      [ -f "$out/$board.bit" ] || { echo "load: no $out/$board.bit: run the bitstream target first"; exit 1; }
      run openFPGALoader "${args[@]}" -c "$cable" "$out/$board.bit"
    else
      [ -f "$out/$board.bin" ] || { echo "load: no $out/$board.bin: run the bitstream target first"; exit 1; }
      run openFPGALoader "${args[@]}" -c "$cable" -f "$out/$board.bin"
    fi
    ;;
  usp)
    need vivado "Alveo cards are loaded with Vivado's hardware manager; 'vivado' is not on PATH"
    image=$out/$board.bit
    [ "$what" = program ] || image=$out/$board.mcs
    for f in "$out/config.tcl" "$image"; do
      [ -f "$f" ] || { echo "load: no $f: run the bitstream target first"; exit 1; }
    done
    cd "$out"
    run vivado -mode batch -nojournal -log "$what.log" -source "$here/../vivado/$what.tcl" -tclargs "$out/config.tcl" "$out"
    ;;
esac
