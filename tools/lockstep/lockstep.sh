#!/usr/bin/env bash
# Lock-step comparison of sgpu_top at a base commit against the working tree (README.md).
#
#   tools/lockstep/lockstep.sh BASE_COMMIT [FIRST_SEED RUNS PACKETS_PER_RUN]
#
# Builds both tops into build-lockstep/ (the base RTL from `git archive`), runs every directed
# sgpu_top test and the differential tests with both tops in lock-step, then RUNS random runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
base=${1:?usage: lockstep.sh BASE_COMMIT [FIRST_SEED RUNS PACKETS_PER_RUN]}
first=${2:-1}
runs=${3:-4}
packets=${4:-20000}
out=${LOCKSTEP_BUILD:-$repo/build-lockstep}
jobs=${JOBS:-2}

mkdir -p "$out/base"
rm -rf "$out/base/tree"
mkdir -p "$out/base/tree"
git -C "$repo" archive "$base" rtl | tar -x -C "$out/base/tree"
for t in base new; do
  tree=$out/base/tree
  [ "$t" = new ] && tree=$repo
  cmake -S "$here/sources" -B "$out/list-$t" -DTREE="$tree" -DOUT="$out/$t.list" >/dev/null
done
cmake -S "$here" -B "$out/build" -G Ninja -DREPO="$repo" -DBASE_LIST="$out/base.list" \
  -DNEW_LIST="$out/new.list" >/dev/null
cmake --build "$out/build" -j "$jobs"
ctest --test-dir "$out/build" -j "$jobs" --output-on-failure
"$out/build/lockstep_random" "$first" "$runs" "$packets"
