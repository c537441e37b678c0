#!/usr/bin/env python3
"""Runs every benchmarks/bench_*.py in turn (what `make bench` calls); each reads
DATABASE_URL from the environment and prints its own figures. Exit status: the first failure."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    status = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"=== {script.name}", flush=True)
        result = subprocess.run([sys.executable, str(script)], check=False)
        if result.returncode and not status:
            status = result.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
