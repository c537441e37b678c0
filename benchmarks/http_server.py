"""The Procfile's processes under the benchmarks' load: `web` (gunicorn) and `worker` (Celery),
each started as the Procfile says, the CPU and peak memory they spend, and the CPU of the
PostgreSQL backends serving them (from /proc). Imported once Django is set up
(benchdb.setup_django): it reads the database's backends."""

from __future__ import annotations

import http.client
import json
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


def procfile(name: str, env: dict) -> list[str]:
    """The Procfile's command for process `name`: its leading NAME=value words go to `env`."""
    lines = dict(
        line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line
    )
    words = shlex.split(lines[name])
    while "=" in words[0]:
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    words[0] = str(Path(sys.executable).parent / words[0])
    return words


def process_env(database_url: str) -> dict:
    env = dict(os.environ)
    env.update(DATABASE_URL=database_url, SECRET_KEY="benchmark-only", ALLOWED_HOSTS="127.0.0.1")
    return env


class Server:
    def __init__(self, port: int, workers: int, threads: int, database_url: str):
        self.port = port
        env = process_env(database_url)
        env.update(PORT=str(port), WEB_CONCURRENCY=str(workers), GUNICORN_THREADS=str(threads))
        (ROOT / ".run").mkdir(exist_ok=True)
        self.log = (ROOT / ".run" / "bench_http_web.log").open("w")
        words = procfile("web", env)
        self.seen: set[int] = set()
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
        """The live workers (each one seen is remembered: gunicorn replaces a worker after
        max_requests, and `seen` then counts the replacements)."""
        live = children_of(self.proc.pid)
        self.seen.update(live)
        return live

    def peak_mb(self) -> float:
        """The largest peak resident memory of the web process and its live workers."""
        return max(peak_rss_mb(pid) for pid in [self.proc.pid, *self.workers()])

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


class Worker:
    """The Procfile's `worker` (Celery), on the broker of this environment (CELERY_BROKER_URL, or
    the embedded filesystem broker under PROOFMARK_RUN_DIR that the web process shares)."""

    def __init__(self, database_url: str):
        env = process_env(database_url)
        (ROOT / ".run").mkdir(exist_ok=True)
        self.path = ROOT / ".run" / "bench_worker.log"
        self.log = self.path.open("w")
        words = procfile("worker", env)
        self.proc = subprocess.Popen(words, cwd=ROOT, env=env, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if " ready." in self.path.read_text(errors="replace"):
                return
            if self.proc.poll() is not None:
                sys.exit("the Celery worker exited: see .run/bench_worker.log")
            time.sleep(0.2)
        self.stop()
        sys.exit("the Celery worker was not ready within 90 s")

    def processes(self) -> list[int]:
        return [self.proc.pid, *children_of(self.proc.pid)]

    def peak_mb(self) -> float:
        """The largest peak resident memory of the worker and its pool processes (the pool
        process that ran a job holds that job's peak)."""
        return max(peak_rss_mb(pid) for pid in self.processes())

    def cpu(self) -> float:
        return tree_cpu(self.proc.pid, children_of(self.proc.pid))

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def children_of(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in children.read_text().split()] if children.exists() else []


def peak_rss_mb(pid: int) -> float:
    """A live process's peak resident memory (VmHWM), in MB; 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def api(port: int, method: str, path: str, token: str, payload=None) -> tuple[int, dict]:
    """One JSON API call with a token."""
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    body = json.dumps(payload) if payload is not None else None
    status, raw = request(port, method, path, headers=headers, body=body)
    return status, json.loads(raw) if raw.startswith((b"{", b"[")) else {"raw": raw[:300]}


def upload(port: int, path: str, token: str, file: Path, fields: dict) -> tuple[int, dict]:
    """A multipart upload of `file` (streamed from disk, as a client library sends it)."""
    boundary = "bench-" + os.urandom(8).hex()
    head = "".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'
        for key, value in fields.items()
    )
    head += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file.name}"'
        "\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    tail = f"\r\n--{boundary}--\r\n".encode()
    size = len(head.encode()) + file.stat().st_size + len(tail)

    def chunks():
        yield head.encode()
        with file.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                yield chunk
        yield tail

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        conn.request(
            "POST",
            path,
            body=chunks(),
            headers={
                "Authorization": f"Token {token}",
                "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Content-Length": str(size),
            },
        )
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def wait_for_job(port: int, path: str, token: str, *, timeout: float = 1800) -> dict:
    """Polls a job's API read until it succeeds (a failure or the timeout stops the run)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, body = api(port, "GET", path, token)
        if status == 200 and body.get("status") == "succeeded":
            return body
        if status != 200 or body.get("status") == "failed":
            sys.exit(f"{path}: {status} {str(body)[:500]}")
        time.sleep(0.1)
    sys.exit(f"{path}: not done within {timeout:.0f} s")


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
