#!/usr/bin/env python3
"""Progress of long runs: one status line with an estimate of the time left, drawn on stderr only
when stderr is a terminal and CI is not set (the same line as libsgpu's diag::Progress, see
host/include/sgpu/diag/progress.hpp).

As a module: Progress(label, total).update(done) / .finish() (tools/run_bench.py).
As a program: progress.py --seconds N [--label L] [--every S] -- COMMAND...
runs COMMAND (its output untouched) and, every S seconds while it runs, prints a full line with
the time left of N seconds (`make fuzz`, whose fuzzer runs FUZZ_SECONDS); exits with its code.
"""
import argparse
import os
import subprocess
import sys
import time


def estimate_left(done, total, elapsed):
    """Seconds left at a constant rate; None before any progress."""
    if done <= 0 or total <= 0:
        return None
    if done >= total:
        return 0.0
    return elapsed * (total - done) / done


def format_duration(seconds):
    """'850 ms', '2.1 s', '3 min 05 s', '1 h 02 min' (as diag::format_duration)."""
    if seconds < 1.0:
        return f"{int(seconds * 1000)} ms"
    if seconds < 60.0:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02} s"
    return f"{whole // 3600} h {whole // 60 % 60:02} min"


def format_progress(label, done, total, elapsed, width=24):
    """'label [#########-----]  45% 45/100, 9.0 s elapsed, ~11.0 s left' (as diag::format_progress)."""
    done = min(done, total)
    frac = done / total if total else 1.0
    filled = int(frac * width)
    left = estimate_left(done, total, elapsed)
    tail = "~? left" if left is None else f"~{format_duration(left)} left"
    return (f"{label} [{'#' * filled}{'-' * (width - filled)}] {int(frac * 100):3}% {done}/{total}, "
            f"{format_duration(elapsed)} elapsed, {tail}")


def wanted(stream):
    """True if progress should be drawn on `stream`: a terminal, and no CI in the environment."""
    if os.environ.get("CI"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """A redrawn status line (carriage return); silent unless enabled (default: wanted(stream))."""

    def __init__(self, label, total, stream=None, enabled=None, min_interval=0.2, now=time.monotonic):
        self.label, self.total = label, total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = wanted(self.stream) if enabled is None else enabled
        self.min_interval, self.now = min_interval, now
        self.start = now()
        self.last = None
        self.done = 0
        self.finished = False

    def update(self, done, note=""):
        self.done = done
        if not self.enabled or self.finished:
            return
        t = self.now()
        if self.last is not None and t - self.last < self.min_interval:
            return
        self.last = t
        self._draw(note)

    def _draw(self, note=""):
        line = format_progress(self.label, self.done, self.total, self.now() - self.start)
        self.stream.write("\r" + line + (f" {note}" if note else "") + "\x1b[K")
        self.stream.flush()

    def finish(self):
        if not self.enabled or self.finished:
            return
        self.finished = True
        self._draw()
        self.stream.write("\n")
        self.stream.flush()


def run_with_status(command, seconds, label, every, stream=None, enabled=None, now=time.monotonic):
    """Runs `command`; every `every` seconds prints a full status line (time left of `seconds`)."""
    stream = stream if stream is not None else sys.stderr
    enabled = wanted(stream) if enabled is None else enabled
    start = now()
    proc = subprocess.Popen(command)
    while True:
        try:
            return_code = proc.wait(timeout=every)
            break
        except subprocess.TimeoutExpired:
            if enabled:
                elapsed = now() - start
                stream.write(format_progress(label, int(min(elapsed, seconds)), int(seconds), elapsed) + "\n")
                stream.flush()
    return return_code


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, required=True, help="how long COMMAND is expected to run")
    ap.add_argument("--label", default="run")
    ap.add_argument("--every", type=float, default=10.0, help="seconds between status lines")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        ap.error("no COMMAND given (progress.py --seconds N -- COMMAND...)")
    sys.exit(run_with_status(command, a.seconds, a.label, a.every))


if __name__ == "__main__":
    main()
