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
