"""The benchmarks' Django set-up and database (created when missing: a fresh machine has none).

The project tree the benchmarks run against is ROOT: this clone, or the tree named by
PROOFMARK_BENCH_TREE (benchmarks/compare.py points it at the starting code's worktree, and runs
the script with that tree's interpreter), so that tree's `manage.py`, Procfile processes and, for
the data built in-process, its code (first on sys.path) are measured. The corpus and other files
the benchmarks write go into this clone's benchmarks/out/ (OUT), shared by both trees."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
TREE_VARIABLE = "PROOFMARK_BENCH_TREE"


def project_tree(value: str | None = None) -> Path:
    """The project tree to measure: `value` (PROOFMARK_BENCH_TREE when not given), else this
    clone; a folder without manage.py stops the benchmark with its name."""
    value = os.environ.get(TREE_VARIABLE) if value is None else value
    tree = Path(value).expanduser().resolve() if value else HERE.parent
    if not (tree / "manage.py").is_file():
        sys.exit(f"{TREE_VARIABLE}={value}: no project there (no manage.py)")
    return tree


ROOT = project_tree()


def setup_django() -> None:
    """Django with the project's settings, DEBUG off (no query log) unless set."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("SECRET_KEY", "benchmark-only")
    import django

    django.setup()


def create_database_if_missing() -> None:
    """Creates the PostgreSQL database named in DATABASE_URL unless it exists."""
    import dj_database_url
    import psycopg

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit("DATABASE_URL must point at PostgreSQL (make bench sets it).")
    config = dj_database_url.parse(url)
    admin = psycopg.connect(
        host=config["HOST"] or "127.0.0.1",
        port=config["PORT"] or 5432,
        user=config["USER"],
        password=config["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    )
    with admin:
        exists = admin.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]
        ).fetchone()
        if not exists:
            admin.execute(f'CREATE DATABASE "{config["NAME"]}"')


def python_speed_ms() -> float:
    """The CPU time (ms, best of five) of a fixed pure-Python loop: how fast this machine runs
    the interpreter. Two virtual machines of the same kind (2 cores) have run the same code
    twice as fast as each other: this figure tells their results apart."""
    import time

    best = float("inf")
    for _ in range(5):
        started, total = time.process_time(), 0
        for i in range(1_000_000):
            total += i % 7
        best = min(best, time.process_time() - started)
    return best * 1000


def machine_words() -> str:
    """The machine as the benchmarks describe it: cores, memory, system, Python and its speed."""
    import platform

    try:
        memory = int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    except OSError:
        memory = float("nan")
    return (
        f"{os.cpu_count()} cores, {memory:.0f} GiB, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()} (reference loop {python_speed_ms():.0f} ms)"
    )


def machine_line() -> str:
    """What every benchmark prints with its figures: the machine, the date and the load."""
    import time

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{machine_words()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"load average {load}"
    )


def run_measured(args: list[str], *, env: dict | None = None) -> tuple[float, float, str]:
    """Runs a whole process as a user would: its wall time (start-up included), its own peak
    resident memory in MB and its output; a failure stops the benchmark with the output.

    The peak is the process's VmHWM (/proc), read every 20 ms while it runs: the kernel's
    rusage of a child (`ru_maxrss`) starts from the parent's peak at the fork, so after the
    export benchmark had built its campaign (350 MB) every export "peaked" at 385 MB."""
    import subprocess
    import threading
    import time

    start = time.perf_counter()
    proc = subprocess.Popen(
        args, cwd=ROOT, env=env or os.environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    peak_kb = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal peak_kb
        status = Path(f"/proc/{proc.pid}/status")
        while not done.wait(0.02):
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(line.split()[1]))
            except (OSError, ValueError):
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    output = proc.stdout.read().decode(errors="replace")
    proc.wait()
    done.set()
    watcher.join()
    seconds = time.perf_counter() - start
    if proc.returncode:
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}):\n{output[-3000:]}")
    return seconds, peak_kb / 1024, output


def manage(*words: str) -> list[str]:
    """`manage.py` as a user runs it, with this interpreter."""
    return [sys.executable, str(ROOT / "manage.py"), *words]
