#!/usr/bin/env python3
"""Runs every registered benchmark (one executable per line of LIST) and prints their JSON
objects merged into one on stdout; also writes it to OUT. A metric reported twice is an error."""
import json
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: run_bench.py BENCH_LIST OUT_JSON")
    merged = {}
    with open(sys.argv[1]) as f:
        benches = [line.strip() for line in f if line.strip()]
    for i, exe in enumerate(benches, 1):
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
    text = json.dumps(dict(sorted(merged.items())), indent=2)
    with open(sys.argv[2], "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
