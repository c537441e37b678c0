"""The web server under benchmarks/bench_http.py's load: the Procfile's `web` process started as
the Procfile says, and the CPU its workers and the PostgreSQL backends serving them spend (from
/proc). Imported once Django is set up (benchdb.setup_django): it reads the database's backends."""

from __future__ import annotations

import http.client
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchdb import ROOT
from django.db import connection

CLK_TCK = os.sysconf("SC_CLK_TCK")


def request(port: int, method: str, path: str, *, headers=None, body=None) -> tuple[int, bytes]:
    """One request on a new connection; a 429's body is replaced by its Retry-After (seconds)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        raw = response.read()
        if response.status == 429:
            raw = (response.getheader("Retry-After") or "0.2").encode()
        return response.status, raw
    finally:
        conn.close()


class Server:
    def __init__(self, port: int, workers: int, threads: int, database_url: str):
        self.port = port
        env = dict(os.environ)
        env.update(
            PORT=str(port),
            WEB_CONCURRENCY=str(workers),
            GUNICORN_THREADS=str(threads),
            DATABASE_URL=database_url,
            DEBUG="false",
            SECRET_KEY="benchmark-only",
            ALLOWED_HOSTS="127.0.0.1",
        )
        (ROOT / ".run").mkdir(exist_ok=True)
        self.log = (ROOT / ".run" / "bench_http_web.log").open("w")
        # The Procfile's `web` line: its leading NAME=value words go to the environment.
        procfile = dict(
            line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line
        )
        words = shlex.split(procfile["web"])
        while "=" in words[0]:
            name, value = words.pop(0).split("=", 1)
            env[name] = value
        words[0] = str(Path(sys.executable).parent / words[0])
        self.proc = subprocess.Popen(words, cwd=ROOT, env=env, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if request(port, "GET", "/healthz")[0] == 200 and len(self.workers()) == workers:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                sys.exit("gunicorn exited: see .run/bench_http_web.log")
            time.sleep(0.2)
        self.stop()
        sys.exit("gunicorn did not answer within 60 s")

    def workers(self) -> list[int]:
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(pid) for pid in children.read_text().split()] if children.exists() else []

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return None


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        if fields := _stat(pid):
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLK_TCK


def tree_cpu(parent: int, children: list[int]) -> float:
    """CPU seconds of a parent's live children plus of those it has reaped (cutime, cstime): a
    worker gunicorn replaced after max_requests, or a backend PostgreSQL ended with its
    connection, still counts."""
    fields = _stat(parent)
    reaped = (int(fields[13]) + int(fields[14])) / CLK_TCK if fields else 0.0
    return cpu_seconds(children) + reaped


def postmaster_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(_stat(cursor.fetchone()[0])[1])  # this connection's backend's parent


def backend_pids(database: str) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [database],
        )
        return [row[0] for row in cursor.fetchall()]
