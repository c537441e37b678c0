"""Benchmark: a selection of a million proofs made a campaign's items in one call of the API.

    DATABASE_URL=postgres://.../proofmark_bench python benchmarks/bench_selection.py
        [--proofs 1000000] [--quick] [--write]

A database of its own beside DATABASE_URL's (`<name>_selection`) holds `--proofs` proofs of
seven problems, one approved scheme (written by PostgreSQL's COPY, as tests/annotation/
test_large_selection.py writes its 70,000; made anew each run, in seconds). The
Procfile's web process (gunicorn, its settings: a statement may run 30 s, a request 60 s) then
serves one `POST /api/v1/campaigns/<slug>/items/` of an admin's token naming the generator of
every proof: the selection the page's filter makes. Printed: the answer's status, the items the
campaign then holds, the call's wall time, the web worker's peak resident memory and the
database's size growth; `--quick`: 100,000 proofs. `--write` appends the figures to RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdb import HERE, create_database_if_missing, machine_line, setup_django  # noqa: E402

GENERATOR = "model-selection"
PROBLEMS = 7


def database_url() -> str:
    import os

    base = os.environ.get("DATABASE_URL", "")
    url = f"{base}_selection"
    os.environ["DATABASE_URL"] = url
    return url


def proofs_write(count: int) -> None:
    """`count` proofs of the selection's generator over seven problems, one scheme approved."""
    from tests.problems.page_factories import proofs_copied

    started = time.perf_counter()
    proofs_copied(count=count, generator=GENERATOR, prefix="SEL", problems=PROBLEMS)
    print(f"{count:,} proofs written in {time.perf_counter() - started:.0f} s", flush=True)


def campaign_new() -> str:
    from campaign import bench_admin

    from annotation.services import campaign_create

    return campaign_create(name="Selection", created_by=bench_admin(), slug="selection").slug


def database_drop() -> None:
    import os

    import dj_database_url
    import psycopg

    config = dj_database_url.parse(os.environ["DATABASE_URL"])
    with psycopg.connect(
        host=config["HOST"] or "127.0.0.1",
        port=config["PORT"] or 5432,
        user=config["USER"],
        dbname="postgres",
        autocommit=True,
    ) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{config["NAME"]}"')


def database_mb() -> float:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        return cursor.fetchone()[0] / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proofs", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100,000 proofs")
    parser.add_argument("--write", action="store_true", help="append to RESULTS.md")
    parser.add_argument("--port", type=int, default=8767)
    args = parser.parse_args()
    count = 100_000 if args.quick else args.proofs
    url = database_url()
    database_drop()  # each run from nothing: the proofs take seconds to write
    create_database_if_missing()
    setup_django()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from campaign import admin_token
    from http_server import Server, request

    from annotation.models import Item

    proofs_write(count)
    slug, token = campaign_new(), admin_token()
    before = database_mb()
    server = Server(args.port, 1, 1, url)
    try:
        started = time.perf_counter()
        status, raw = request(
            args.port,
            "POST",
            f"/api/v1/campaigns/{slug}/items/",
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
            body=json.dumps({"generator": GENERATOR}).encode(),
        )
        wall = time.perf_counter() - started
        peak = server.peak_mb()
    finally:
        server.stop()
    items = Item.objects.filter(campaign__slug=slug).count()
    answer = json.loads(raw) if raw.startswith(b"{") else {}
    lines = [
        machine_line(),
        f"a selection of {count:,} proofs, one API call: {status}, {items:,} items in the "
        f"campaign ({answer.get('double_scored', 0):,} double-scored), {wall:.1f} s, "
        f"{items / wall:,.0f} items/s, web worker peak {peak:.0f} MB, "
        f"database +{database_mb() - before:.0f} MB",
    ]
    if status != 201:
        lines.append(f"answer: {raw[:300]!r}")
    print("\n".join(lines))
    if args.write:
        with (HERE / "RESULTS.md").open("a") as out:
            out.write("\n## A selection in one call (bench_selection.py)\n\n")
            out.write("\n".join(f"- {line}" for line in lines) + "\n")
    return 0 if status == 201 and items == count else 1


if __name__ == "__main__":
    sys.exit(main())
