#!/usr/bin/env python3
"""`sgpu demo --trace FILE` writes valid Chrome trace-event JSON with its tracks named, and the
timeline picture (SVG) beside it. Usage: check_demo_trace.py <sgpu binary> <work directory>."""
import json
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET


def main() -> int:
    sgpu, work = sys.argv[1], pathlib.Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    trace = work / "demo.trace.json"
    for stale in (trace, work / "demo.timeline.svg"):
        stale.unlink(missing_ok=True)
    run = subprocess.run([sgpu, "demo", "--no-reference", "--png", str(work / "demo.png"), "--trace", str(trace)],
                         capture_output=True, text=True, check=False)
    print(run.stdout, run.stderr)
    if run.returncode != 0 or "demo passed" not in run.stdout:
        print("FAIL: the demo did not pass")
        return 1
    doc = json.loads(trace.read_text())
    events = doc["traceEvents"]
    threads = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    want = ["context 1 (render) queue", "ring (SubmitCommand: entry + doorbell)",
            "engine (CP + copy engine), device timestamps", "interrupts, reports and TDR"]
    missing = [w for w in want if w not in threads]
    phases = {e["ph"] for e in events}
    if missing or not {"X", "i", "C", "M"} <= phases:
        print(f"FAIL: tracks missing {missing}, phases {sorted(phases)}")
        return 1
    # The low-priority copy is preempted by frame work and resumes inside its stream; the report
    # says so, and the copy context's row shows each preemption and resumption.
    copy_line = re.search(r"submission \d+ \(copy, priority -1, ring fence \d+\) preempted for "
                          r"(render frame \d+ \(priority 1; submitted to completed [^)]+\)|the Present of frame \d+ "
                          r"\(priority 2\)): resumed at offset [1-9]\d* as ring fence \d+ at [^,]+, [^ ]+ [mun]?s after "
                          r"the preemption request", run.stdout)
    hang_line = re.search(r"hang: +put back at its first TdrDelay overrun, recovered at its second", run.stdout)
    if not copy_line or not hang_line:
        print(f"FAIL: the report lacks the copy's preemption ({bool(copy_line)}) or the hang's recovery ({bool(hang_line)})")
        return 1
    copy_tid = {(e["pid"], e["tid"]) for e in events
                if e["ph"] == "M" and e["name"] == "thread_name" and e["args"]["name"] == "context 2 (copy) queue"}
    marks = [e["name"] for e in events
             if e["ph"] == "i" and (e["pid"], e.get("tid")) in copy_tid and e["name"] in ("preempted", "resumed")]
    if not marks or marks[0] != "preempted" or marks.count("preempted") != marks.count("resumed"):
        print(f"FAIL: the copy context's row shows {marks}")
        return 1
    svg = ET.parse(work / "demo.timeline.svg").getroot()
    if not svg.tag.endswith("svg"):
        print("FAIL: the picture is not SVG")
        return 1
    print(f"ok: {len(events)} events, {len(threads)} named tracks, picture {work / 'demo.timeline.svg'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
