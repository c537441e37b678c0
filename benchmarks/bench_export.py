#!/usr/bin/env python
"""Export benchmark: rows/s and peak memory of a dataset export, as users run it.

    DATABASE_URL=postgres://... python benchmarks/bench_export.py [--quick] [--repeat 3]

The campaign is made as users make one (benchmarks/campaign.py): benchmarks/corpus.py's corpus
imported, a campaign of 20,000 items (`--quick` 2,000) with the default 40% double-scored, four
experts grading every item through the services (two on each double-scored item, varied scores),
so final labels and adjudication cases come from the project's rules; `--skip-load` reuses it.
The database named in DATABASE_URL is created when missing and migrated (use one of its own).
Then, for ProofBench JSONL and D_v Parquet:
1. `manage.py export_dataset`, a whole process (start-up included): `--repeat` runs (default 3,
   `--quick` 1), the median reported; peak memory: that process's own maximum resident set.
2. The API with the Procfile's processes: `POST /api/v1/exports/` to `web` (gunicorn), run by a
   fresh `worker` (Celery); timed from the request until the job reads `succeeded` (polled every
   0.1 s); peak memory: the worker's largest process.
3. In-process (labelled so, never the headline): `dataset_write()` in a warm process.
Prints the machine, date and load average with the figures; writes them to `--json`
(default benchmarks/out/export/results.json).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from benchdb import OUT as BENCH_OUT
from benchdb import create_database_if_missing, machine_line, manage, run_measured, setup_django
from corpus import corpus_file

OUT = BENCH_OUT / "export"
SLUG = "bench-export"
EXPORTS = [("proofbench", "jsonl"), ("dv", "parquet")]


def database_url() -> str:
    from django.db import connection

    settings = connection.settings_dict
    return (
        f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:"
        f"{settings['PORT'] or 5432}/{settings['NAME']}"
    )


def by_command(fmt: str, file_type: str) -> dict:
    out = OUT / f"{SLUG}-{fmt}.{file_type}"
    # a new file, as a user exports a dataset: replacing the last run's (136 MB of JSONL) would
    # add the file system's unlink of it (30-90 ms here) to the export
    out.unlink(missing_ok=True)
    seconds, peak, _ = run_measured(
        manage(
            "export_dataset", "--campaign", SLUG, "--format", fmt, "--file-type", file_type,
            "--out", str(out),
        )
    )  # fmt: skip
    rows = json.loads(Path(f"{out}.manifest.json").read_text())["counts"]["rows"]
    return {
        "rows": rows,
        "seconds": round(seconds, 2),
        "rows_per_s": round(rows / seconds),
        "peak_mb": round(peak, 1),
        "size_mb": round(out.stat().st_size / 2**20, 1),
        "load_average": round(os.getloadavg()[0], 1),
    }


def by_api(server, token: str, fmt: str, file_type: str) -> dict:
    from http_server import Worker, api, wait_for_job

    worker = Worker(database_url())
    try:
        start = time.perf_counter()
        status, body = api(
            server.port, "POST", "/api/v1/exports/", token,
            {"campaign": SLUG, "format": fmt, "file_type": file_type},
        )  # fmt: skip
        if status != 201:
            sys.exit(f"export job: {status} {body}")
        job = wait_for_job(server.port, f"/api/v1/exports/{body['id']}/", token)
        seconds = time.perf_counter() - start
        rows = job["manifest"]["counts"]["rows"]
        return {
            "rows": rows,
            "seconds": round(seconds, 2),
            "rows_per_s": round(rows / seconds),
            "worker_peak_mb": round(worker.peak_mb(), 1),
            "load_average": round(os.getloadavg()[0], 1),
        }
    finally:
        worker.stop()


def in_process(fmt: str, file_type: str) -> dict:
    from annotation.models import Campaign
    from exports.formats import ExportOptions
    from exports.services import dataset_write

    start = time.perf_counter()
    manifest = dataset_write(
        campaign=Campaign.objects.get(slug=SLUG),
        fmt=fmt,
        file_type=file_type,
        options=ExportOptions(),
        out=OUT / f"{SLUG}-{fmt}-in-process.{file_type}",
    )
    seconds = time.perf_counter() - start
    rows = manifest["counts"]["rows"]
    return {"rows": rows, "seconds": round(seconds, 2), "rows_per_s": round(rows / seconds)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 items, one run of each")
    parser.add_argument("--items", type=int, help="items of the campaign (default 20,000)")
    parser.add_argument("--repeat", type=int, help="runs of each command (median; default 3)")
    parser.add_argument("--skip-load", action="store_true", help="reuse the graded campaign")
    parser.add_argument("--port", type=int, default=int(os.environ.get("BENCH_HTTP_PORT", 8765)))
    parser.add_argument(
        "--json", type=Path, default=OUT / "results.json", help="where the figures go"
    )
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("Set DATABASE_URL to a PostgreSQL database (it is migrated and written to).")
    items = args.items or (2000 if args.quick else 20000)
    repeat = args.repeat or (1 if args.quick else 3)
    create_database_if_missing()
    setup_django()
    from campaign import admin_token, campaign_build, campaign_grade
    from django.core.management import call_command
    from http_server import Server

    call_command("migrate", verbosity=0)
    OUT.mkdir(parents=True, exist_ok=True)
    machine = machine_line()
    if not args.skip_load:
        start = time.perf_counter()
        built = campaign_build(
            slug=SLUG, corpus=corpus_file(items, folder=OUT.parent), items=items, experts=4
        )
        judged = campaign_grade(built)
        print(
            f"set up (not timed as export): {built.items:,} items, {built.double_scored:,} "
            f"double-scored, {judged:,} judgements through the services in "
            f"{time.perf_counter() - start:.0f} s",
            flush=True,
        )
    from django.db import connection

    from adjudication.models import FinalLabel

    with connection.cursor() as cursor:
        # the tables as autovacuum keeps them on a live database: planner statistics of the graded
        # campaign and the rows of the campaign it replaced cleared away (this machine's
        # PostgreSQL runs with autovacuum off: without this, the export read its labels planned
        # for the empty tables the campaign started with, through the replaced one's dead rows)
        cursor.execute("VACUUM ANALYZE")
    if not FinalLabel.objects.filter(item__campaign__slug=SLUG).exists():
        sys.exit(f"campaign {SLUG} has no final labels: run without --skip-load")
    token = admin_token()
    results: dict = {"machine": machine, "items": items, "exports": {}}
    server = Server(args.port, 2, 1, database_url())
    try:
        for fmt, file_type in EXPORTS:
            runs = sorted(
                (by_command(fmt, file_type) for _ in range(repeat)), key=lambda r: r["seconds"]
            )
            results["exports"][f"{fmt} {file_type}"] = {
                "command": runs[len(runs) // 2],
                "command_runs": runs,
                "api": by_api(server, token, fmt, file_type),
                "in_process": in_process(fmt, file_type),
            }
    finally:
        server.stop()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1))

    print(f"\nExport benchmark{' (--quick)' if args.quick else ''}: {machine}")
    for name, figures in results["exports"].items():
        command, job, warm = figures["command"], figures["api"], figures["in_process"]
        print(
            f"{name:>17}, manage.py export_dataset: {command['rows']:,} rows, {command['seconds']} s, "
            f"{command['rows_per_s']:,} rows/s, peak {command['peak_mb']} MB, file "
            f"{command['size_mb']} MB (load {command['load_average']})"
        )
        if repeat > 1:
            rates = [run["rows_per_s"] for run in figures["command_runs"]]
            print(f"{'':>17}  runs: {rates} rows/s (median {statistics.median(rates):,.0f})")
        print(
            f"{name:>17}, API job + worker: {job['seconds']} s, {job['rows_per_s']:,} rows/s, "
            f"worker peak {job['worker_peak_mb']} MB (load {job['load_average']})"
        )
        print(
            f"{name:>17}, in-process dataset_write (warm, labelled): {warm['seconds']} s, "
            f"{warm['rows_per_s']:,} rows/s"
        )
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
