#!/usr/bin/env python3
"""Every Catch2 test case reaches CTest under its own name, and every CTest test made from a
Catch2 binary runs exactly the test case it is named after.

catch_discover_tests lists a binary's test cases and registers one CTest test per line, handing
the name back to the binary as its test spec. A name with ';' in it is split by CMake (';' is its
list separator) into tests whose specs select nothing, and a Catch2 binary whose spec selects
nothing exits 0: the test passes without running. Characters Catch2's spec parser gives meanings
to break the round trip too (a backslash selects nothing, a leading '~' everything else). So this
check asks the binaries rather than reading source: each one lists its test cases, and each
registered spec is handed back to its binary to say which test cases it selects. A binary that
links Catch2 but that no test runs is reported as well.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys


def run_catch(exe, args):
    """The test cases `exe args --list-test-names-only -v high` selects, as (name, location)."""
    out = subprocess.run([exe, *args, "--list-test-names-only", "-v", "high"], capture_output=True,
                         text=True, check=False)
    if out.returncode < 0:
        sys.exit(f"{exe} {args} --list-test-names-only died with signal {-out.returncode}:\n{out.stderr}")
    cases = []
    for line in out.stdout.splitlines():
        if line.strip():
            name, _, where = line.partition("\t@")
            cases.append((name, where))
    return cases


def unescape(spec):
    # catch_discover_tests escapes these three in the spec it passes; the name is the rest.
    for c in ",[]":
        spec = spec.replace("\\" + c, c)
    return spec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="CMake build directory")
    ap.add_argument("--binaries", required=True, help="file listing the Catch2 executables, one a line")
    ap.add_argument("--ctest", default="ctest")
    a = ap.parse_args()

    with open(a.binaries) as f:
        binaries = {os.path.realpath(line.strip()) for line in f if line.strip()}

    shown = subprocess.run([a.ctest, "--show-only=json-v1", "--test-dir", a.build], capture_output=True,
                           text=True, check=True)
    registered = {}  # executable -> [(ctest name, arguments)]
    run_otherwise = set()  # executables named in a test's command written by hand
    for test in json.loads(shown.stdout)["tests"]:
        command = test.get("command") or []
        if "backtrace" in test:
            # An add_test() in a CMakeLists, its arguments as written (discovered tests have no
            # backtrace): a Catch2 binary it names (to run, or to hand to a runner) is reached.
            run_otherwise.update(os.path.realpath(arg) for arg in command if os.path.isabs(arg))
            continue
        if command and os.path.realpath(command[0]) in binaries:
            registered.setdefault(os.path.realpath(command[0]), []).append((test["name"], command[1:]))

    jobs = [(exe, None, []) for exe in registered]
    jobs += [(exe, name, args) for exe, tests in registered.items() for name, args in tests]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda job: run_catch(job[0], job[2]), jobs))

    errors = []
    listed = {}    # executable -> [(name, location)]
    selected = {}  # executable -> names some CTest test runs
    for (exe, ctest_name, args), cases in zip(jobs, results):
        if ctest_name is None:
            listed[exe] = cases
            continue
        spec = unescape(args[0]) if args else ""
        if len(cases) == 1 and ctest_name.endswith(cases[0][0]):
            selected.setdefault(exe, set()).add(cases[0][0])
        elif not cases:
            errors.append(f"CTest test '{ctest_name}' runs {os.path.basename(exe)} with the spec '{spec}', "
                          "which selects no test case: it passes without running anything")
        elif len(cases) > 1:
            errors.append(f"CTest test '{ctest_name}' runs {os.path.basename(exe)} with the spec '{spec}', "
                          f"which selects {len(cases)} test cases: '{cases[0][0]}', '{cases[1][0]}'"
                          + (", ..." if len(cases) > 2 else ""))
        else:
            errors.append(f"CTest test '{ctest_name}' runs the test case '{cases[0][0]}' ({cases[0][1]}), "
                          "whose name it does not carry")

    for exe, cases in listed.items():
        for name, where in cases:
            if name in selected.get(exe, set()):
                continue
            why = ""
            if ";" in name:
                why = ": CMake splits names at ';' (its list separator), so rename it without ';'"
            elif any(c in name for c in '"\\*~'):
                why = ": Catch2's test spec parser gives meanings to '\"', '\\', '*' and '~': rename it without them"
            errors.append(f"test case '{name}' ({where}) of {os.path.basename(exe)} is run by no CTest test{why}")

    for exe in sorted(binaries - set(registered) - run_otherwise):
        errors.append(f"{exe} links Catch2 but no CTest test runs it: catch_discover_tests({os.path.basename(exe)})")

    count = sum(len(tests) for tests in registered.values())
    if errors:
        print("\n".join(errors))
        print(f"{len(errors)} problem(s) in {count} CTest tests from {len(registered)} Catch2 binaries")
        return 1
    print(f"{count} CTest tests from {len(registered)} Catch2 binaries each run the one test case "
          "they are named after, and every test case has one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
