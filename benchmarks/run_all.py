#!/usr/bin/env python3
"""Runs every benchmarks/bench_*.py in turn (what `make bench` calls; `make bench QUICK=1` passes
`--quick` for a short run while developing). Each reads DATABASE_URL from the environment and
prints its own figures with the machine, the date and the load average. Exit status: the first
failure."""

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="each benchmark at its --quick size")
    args = parser.parse_args()
    status = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"=== {script.name}{' --quick' if args.quick else ''}", flush=True)
        command = [sys.executable, str(script), *(["--quick"] if args.quick else [])]
        result = subprocess.run(command, check=False)
        if result.returncode and not status:
            status = result.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
