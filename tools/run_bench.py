#!/usr/bin/env python3
"""Runs every registered benchmark (one executable per line of LIST) and prints their JSON
objects merged into one on stdout; also writes it to OUT. A metric reported twice is an error."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from progress import Progress  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: run_bench.py BENCH_LIST OUT_JSON")
    merged = {}
    with open(sys.argv[1]) as f:
        benches = [line.strip() for line in f if line.strip()]
    # On a terminal: one status line with the time left; elsewhere (CI, logs): a line per bench.
    progress = Progress("bench", len(benches), min_interval=0)
    for i, exe in enumerate(benches, 1):
        if progress.enabled:
            progress.update(i - 1, f"running {os.path.basename(exe)}")
        else:
            print(f"bench [{i}/{len(benches)}] {exe}", file=sys.stderr, flush=True)
        try:
            out = subprocess.run([exe], check=True, capture_output=True, text=True, timeout=1800).stdout
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            sys.exit(f"run_bench: {exe} failed: {e}\n{getattr(e, 'stderr', '') or ''}")
        metrics = json.loads(out)
        for key, value in metrics.items():
            if key in merged:
                sys.exit(f"run_bench: metric {key} reported twice")
            if not isinstance(value, (int, float)):
                sys.exit(f"run_bench: metric {key} of {exe} is not a number")
            merged[key] = value
    progress.update(len(benches))
    progress.finish()
    text = json.dumps(dict(sorted(merged.items())), indent=2)
    with open(sys.argv[2], "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
