"""The test databases are copies of one template, migrated once.

Building a test database through every migration took about a minute per xdist worker. The
template (`test_<name>_template_<digest>`) is built by whichever worker comes first, under a
PostgreSQL advisory lock, by `manage.py migrate` in a database of its own that is renamed into
place only once migrated (a run killed half-way leaves no half-built template); the digest
covers Django's version and every migration file, so a changed migration builds a new template
and the old ones are dropped. Each worker's database is then `CREATE DATABASE ... TEMPLATE`
(Django's `TEST["TEMPLATE"]`), whose own `migrate` finds nothing left to apply.
"""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import django
import psycopg

ROOT = Path(__file__).resolve().parent.parent
LOCK_KEY = 0x70726F6F  # pg_advisory_lock's key for building the template


def migrations_digest() -> str:
    digest = hashlib.sha256(django.get_version().encode())
    for path in sorted(ROOT.glob("*/migrations/*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def _url(db: dict, name: str) -> str:
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return (
        f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}"
    )


def template_database(db: dict) -> str:
    """The name of the migrated template for the database settings `db`, built when missing."""
    prefix = f"test_{db['NAME']}_template_"
    name = prefix + migrations_digest()
    with psycopg.connect(_url(db, "postgres").replace("postgres://", "postgresql://", 1)) as conn:
        conn.autocommit = True
        conn.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEY])
        try:
            have = {
                row[0]
                for row in conn.execute(
                    "SELECT datname FROM pg_database WHERE datname LIKE %s", [prefix + "%"]
                )
            }
            if name in have:
                return name
            for stale in have:  # older templates, and a build a killed run left
                conn.execute(f'DROP DATABASE IF EXISTS "{stale}" WITH (FORCE)')
            building = name + "_building"
            conn.execute(f'CREATE DATABASE "{building}"')
            env = {**os.environ, "DATABASE_URL": _url(db, building)}
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                cwd=ROOT,
                env=env,
                check=True,
            )
            conn.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
            return name
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
