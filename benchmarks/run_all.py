#!/usr/bin/env python3
"""Runs every benchmarks/bench_*.py in turn (what `make bench` calls; `make bench QUICK=1` passes
`--quick` for a short run while developing): first the headline, Proofmark and Label Studio side
by side (bench_versus_label_studio.py, which runs bench_http.py, bench_import.py and
bench_export.py in its rounds), then the others. Each reads DATABASE_URL from the environment and
prints its own figures with the machine, the date and the load average. Exit status: the first
failure."""

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADLINE = "bench_versus_label_studio.py"
IN_HEADLINE = {"bench_http.py", "bench_import.py", "bench_export.py"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="each benchmark at its --quick size")
    args = parser.parse_args()
    status = 0
    others = [s for s in sorted(HERE.glob("bench_*.py")) if s.name not in {HEADLINE, *IN_HEADLINE}]
    for script in [HERE / HEADLINE, *others]:
        print(f"=== {script.name}{' --quick' if args.quick else ''}", flush=True)
        command = [sys.executable, str(script), *(["--quick"] if args.quick else [])]
        result = subprocess.run(command, check=False)
        if result.returncode and not status:
            status = result.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
