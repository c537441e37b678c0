"""The benchmarks' Django set-up and database (created when missing: a fresh machine has none)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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


def machine_line() -> str:
    """What every benchmark prints with its figures: the machine, the date and the load."""
    import platform
    import time

    try:
        memory = int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    except OSError:
        memory = float("nan")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} cores, {memory:.0f} GiB, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
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
