#!/usr/bin/env python3
"""Checks of tools/progress.py: the line format (the same as libsgpu's diag::format_progress, see
host/tests/test_progress.cpp), the estimate, silence when not on a terminal or under CI, and the
command wrapper `make fuzz` uses."""
import io
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progress  # noqa: E402


class Tty(io.StringIO):
    def isatty(self):
        return True


class ProgressChecks(unittest.TestCase):
    def test_estimate(self):
        self.assertIsNone(progress.estimate_left(0, 100, 5))
        self.assertEqual(progress.estimate_left(25, 100, 10), 30)
        self.assertEqual(progress.estimate_left(100, 100, 3), 0)

    def test_line_format_matches_the_cpp_one(self):
        self.assertEqual(progress.format_progress("soak", 45, 100, 9, 20),
                         "soak [#########-----------]  45% 45/100, 9.0 s elapsed, ~11.0 s left")
        self.assertEqual(progress.format_progress("soak", 0, 100, 1, 10),
                         "soak [----------]   0% 0/100, 1.0 s elapsed, ~? left")
        self.assertEqual(progress.format_progress("soak", 120, 100, 1, 4),
                         "soak [####] 100% 100/100, 1.0 s elapsed, ~0 ms left")
        self.assertEqual(progress.format_duration(0.85), "850 ms")
        self.assertEqual(progress.format_duration(185), "3 min 05 s")
        self.assertEqual(progress.format_duration(3720), "1 h 02 min")

    def test_silent_when_not_a_terminal_or_under_ci(self):
        out = io.StringIO()
        p = progress.Progress("bench", 3, stream=out)
        for i in range(4):
            p.update(i)
        p.finish()
        self.assertEqual(out.getvalue(), "")
        with mock.patch.dict(os.environ, {"CI": "true"}):
            self.assertFalse(progress.wanted(Tty()))
        with mock.patch.dict(os.environ, {"CI": ""}):
            self.assertTrue(progress.wanted(Tty()))

    def test_draws_on_a_terminal_at_most_every_interval(self):
        clock = [0.0]
        out = Tty()
        with mock.patch.dict(os.environ, {"CI": ""}):
            p = progress.Progress("bench", 4, stream=out, min_interval=0.1, now=lambda: clock[0])
        p.update(1)
        clock[0] = 0.05
        p.update(2)
        clock[0] = 0.2
        p.update(3, "(bench_x)")
        p.finish()
        p.finish()
        text = out.getvalue()
        self.assertEqual(text.count("\r"), 3)
        self.assertNotIn(" 2/4", text)
        self.assertIn(" 75% 3/4, 200 ms elapsed, ~66 ms left (bench_x)", text)
        self.assertTrue(text.endswith("\n"))

    def test_wrapper_returns_the_command_status_and_prints_status_lines(self):
        out = Tty()
        code = progress.run_with_status([sys.executable, "-c", "import time, sys; time.sleep(0.35); sys.exit(3)"],
                                        seconds=1, label="fuzz", every=0.1, stream=out, enabled=True)
        self.assertEqual(code, 3)
        self.assertIn("fuzz [", out.getvalue())
        self.assertIn("/1, ", out.getvalue())
        quiet = io.StringIO()
        self.assertEqual(progress.run_with_status([sys.executable, "-c", "pass"], seconds=1, label="fuzz",
                                                  every=0.05, stream=quiet), 0)
        self.assertEqual(quiet.getvalue(), "")


if __name__ == "__main__":
    unittest.main()
