"""Fault drills against the Procfile's `web` process (gunicorn, DEBUG off), as docs/deploying.md
describes the deployment: each drill does what an abuser or a failure does and prints what users
saw (statuses, times, messages). Run with `make drills` (PostgreSQL and Redis of `make test`),
or `DATABASE_URL=... CELERY_BROKER_URL=redis://... .venv/bin/python benchmarks/fault_drills.py`.

Drills: a password spray from one address over 40 names; 30 guesses at one name from 30
addresses (behind a trusted proxy); a YAML alias bomb in a MathArena upload; an upload declaring
2 GB; JSON Lines nested 200 deep; a 15 s lock on the assignments table while an expert asks for
work; readiness while the database refuses new connections, then takes them again."""

from __future__ import annotations

import io
import json
import os
import socket
import sys
import threading
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchdb  # noqa: E402

PORT = int(os.environ.get("DRILL_PORT", "8791"))


def raw(method: str, path: str, headers: dict, body: bytes = b"", *, send_body=True):
    """One request over a socket of its own (the body need not match its declared length)."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    with socket.create_connection(("127.0.0.1", PORT), timeout=60) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + (body if send_body else b""))
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, rest = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), head.decode("latin-1"), rest


def multipart(fields: dict, name: str, content: bytes) -> tuple[dict, bytes]:
    boundary = "drill-boundary"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode()
        + content
        + b"\r\n"
    )
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return {"Content-Type": f"multipart/form-data; boundary={boundary}"}, body


def login_form(username: str, password: str, forwarded: str | None = None) -> int:
    import http.client
    import re

    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    extra = {"X-Forwarded-For": forwarded} if forwarded else {}
    conn.request("GET", "/accounts/login/", headers=extra)
    page = conn.getresponse()
    cookie = page.getheader("Set-Cookie", "").split(";")[0]
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.read()).group(1)
    body = f"csrfmiddlewaretoken={token.decode()}&username={username}&password={password}"
    conn.request(
        "POST",
        "/accounts/login/",
        body=body,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": cookie,
            "Referer": f"http://127.0.0.1:{PORT}/accounts/login/",
            **extra,
        },
    )
    status = conn.getresponse().status
    conn.close()
    return status


def counts(statuses: list[int]) -> str:
    return ", ".join(f"{s}: {statuses.count(s)}" for s in sorted(set(statuses)))


def main() -> None:
    benchdb.create_database_if_missing()
    os.environ.setdefault("TRUSTED_PROXIES", "127.0.0.1")
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if broker.startswith("redis://"):
        os.environ.setdefault("CACHE_URL", broker.rsplit("/", 1)[0] + "/3")
    benchdb.setup_django()
    from django.contrib.auth.models import Group, User
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from rest_framework.authtoken.models import Token

    call_command("migrate", verbosity=0)
    cache.clear()
    from http_server import Server

    from core.roles import ensure_role_groups

    ensure_role_groups()
    admin, _ = User.objects.get_or_create(username="drill-admin", defaults={"is_staff": True})
    admin.set_password("drill-admin-right-passphrase")
    admin.save()
    admin.groups.add(Group.objects.get(name="admin"))
    token = Token.objects.get_or_create(user=admin)[0].key
    auth = {"Authorization": f"Token {token}"}
    url = os.environ["DATABASE_URL"]
    env_before = dict(os.environ)
    server = Server(PORT, 2, 1, url)
    print(benchdb.machine_line())
    print(f"{'drill':<58} what users saw")
    try:
        statuses = [login_form(f"name{n % 40}", "wrong") for n in range(160)]
        print(f"{'160 wrong passwords, one address, 40 names':<58} {counts(statuses)}")
        statuses = [login_form("drill-admin", "wrong", f"198.51.100.{n}") for n in range(30)]
        print(f"{'30 wrong drill-admin log-ins from 30 addresses':<58} {counts(statuses)}")
        right = login_form("drill-admin", "drill-admin-right-passphrase", "192.0.2.1")
        print(f"{'  then the right password at once (slowed: it waits its turn)':<58} {right}")

        bomb = io.BytesIO()
        with zipfile.ZipFile(bomb, "w") as archive:
            archive.writestr("usamo_2025/problems/1.tex", "Prove it.")
            archive.writestr(
                "usamo_2025/grading_scheme.json",
                json.dumps([{"id": "1", "points": 7, "scheme": [{"title": "All", "points": 7}]}]),
            )
            archive.writestr(
                "usamo_2025/config.yaml",
                'a: &a ["l","l","l","l","l","l","l","l","l"]\n'
                + "".join(
                    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n"
                    for p, n in zip("abcdefg", "bcdefgh", strict=True)
                ),
            )
        headers, body = multipart({"format": "matharena"}, "usamo_2025.zip", bomb.getvalue())
        status, _, answer = raw("POST", "/api/v1/imports/", {**auth, **headers,
                                "Content-Length": str(len(body))}, body)  # fmt: skip
        job = json.loads(answer or b"{}").get("id")
        detail = ""
        if job:
            from problems.models import ImportJob
            from problems.services import import_job_run

            import_job_run(job_id=job)  # run here: no worker in the drill
            done = ImportJob.objects.get(pk=job)
            errors = [i["message"] for i in done.report if i.get("level") == "error"]
            detail = f"; job {done.status}: {errors[:1]}"
        print(f"{'YAML alias bomb (7 levels, 295 bytes) in a MathArena zip':<58} {status}{detail}")

        started = time.monotonic()
        status, _, answer = raw(
            "POST", "/api/v1/imports/",
            {**auth, "Content-Type": "multipart/form-data; boundary=x",
             "Content-Length": str(2 * 1024**3)}, b"", send_body=False,
        )  # fmt: skip
        print(
            f"{'an upload declaring 2 GB (no body sent)':<58} {status} in "
            f"{time.monotonic() - started:.2f} s: {answer[:90].decode(errors='replace')}"
        )
        deep = b'{"kind": "problem", "id": "D", "x": ' + b"[" * 200 + b"]" * 200 + b"}\n"
        headers, body = multipart({"format": "jsonl"}, "deep.jsonl", deep)
        status, _, answer = raw("POST", "/api/v1/imports/", {**auth, **headers,
                                "Content-Length": str(len(body))}, body)  # fmt: skip
        print(f"{'JSON Lines nested 200 deep':<58} {status}: {answer[:100].decode()}")

        import psycopg

        params = {k: v for k, v in connection.get_connection_params().items()}
        for unused in ("cursor_factory", "context"):
            params.pop(unused, None)
        holder = psycopg.connect(**params)
        holder.execute("LOCK TABLE annotation_grade IN ACCESS EXCLUSIVE MODE")
        seen: list[tuple[int, float]] = []

        def ask() -> None:
            t0 = time.monotonic()
            status, _, _ = raw("GET", "/api/v1/grades/", auth)
            seen.append((status, time.monotonic() - t0))

        asking = [threading.Thread(target=ask) for _ in range(4)]
        for thread in asking:
            thread.start()
        time.sleep(15)
        holder.rollback()
        holder.close()
        for thread in asking:
            thread.join()
        print(
            f"{'4 reads while the grades table is locked for 15 s':<58} "
            + ", ".join(f"{s} after {t:.1f} s" for s, t in seen)
        )
        status, _, _ = raw("GET", "/readyz", {})
        print(f"{'/readyz with the database up':<58} {status}")

        # The database refuses every new connection (as when its connections are used up); the
        # web workers' kept connections still serve, so only a new connection tells the truth.
        admin_db = psycopg.connect(**{**params, "dbname": "postgres"}, autocommit=True)
        name = connection.settings_dict["NAME"]
        admin_db.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        try:
            seen = []
            for path in ("/readyz", "/healthz", "/readyz"):
                t0 = time.monotonic()
                status, _, _ = raw("GET", path, {})
                seen.append(f"{path} {status} in {time.monotonic() - t0:.2f} s")
        finally:
            admin_db.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
            admin_db.close()
        print(f"{'the database refuses new connections':<58} " + ", ".join(seen))
        status, _, _ = raw("GET", "/readyz", {})
        print(f"{'  then it takes them again: /readyz':<58} {status}")
    finally:
        server.stop()
        os.environ.clear()
        os.environ.update(env_before)
        cache.clear()
        from accounts.login_limits import login_unlock

        login_unlock("drill-admin")


if __name__ == "__main__":
    main()
