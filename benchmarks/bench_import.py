#!/usr/bin/env python3
"""Import benchmark: proofs/s and peak memory of an import, as users run it.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/proofmark_bench python benchmarks/bench_import.py [--quick]

The corpus is benchmarks/corpus.py's (ProofBench-shaped JSONL, real-shaped proofs of varied
length; 20,000 rows, `--quick` 2,000), written once into benchmarks/out/ (git-ignored). The
database named in DATABASE_URL is created when missing and migrated; its corpus is emptied before
each first import (use a database of its own: `make bench` does).
1. `manage.py import_corpus FILE`, a whole process (interpreter and Django start-up, checks, the
   import): into an empty corpus, then the same file again (nothing new); `--repeat` pairs
   (default 3, `--quick` 1), the median by first-import time reported. Peak memory: that
   process's own maximum resident set (VmHWM, read while it runs).
2. The API with the Procfile's processes: `POST /api/v1/imports/` (multipart upload, streamed) to
   the `web` process (gunicorn), run by the `worker` process (Celery, on CELERY_BROKER_URL or the
   embedded filesystem broker); timed from the upload's first byte until the job reads
   `succeeded` (polled every 0.1 s); peak memory: the worker's largest process.
3. Memory flat in file size: step 1's first import of a file five times as large.
4. In-process (labelled so, never the headline): `corpus_import()` called in a warm process.
Prints the machine, date and load average with the figures; writes them to `--json`
(default benchmarks/out/bench_import.json).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from benchdb import (
    OUT,
    create_database_if_missing,
    machine_line,
    manage,
    run_measured,
    setup_django,
)
from corpus import corpus_file


def empty_corpus() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE problems_problem, problems_referencesolution, problems_proof, "
            "problems_verifieranalysis CASCADE"
        )
        cursor.execute("VACUUM ANALYZE problems_problem")


def proofs_created(output: str) -> int:
    line = next(line for line in output.splitlines() if line.startswith("proofs:"))
    return int(line.split()[1])


def whole_process(path: Path, rows: int) -> dict:
    seconds, peak, output = run_measured(manage("import_corpus", str(path)))
    return {
        "seconds": round(seconds, 2),
        "proofs_per_s": round(rows / seconds),
        "peak_mb": round(peak, 1),
        "created": proofs_created(output),
        "load_average": round(os.getloadavg()[0], 1),
    }


def through_api(path: Path, rows: int, port: int) -> dict:
    from campaign import admin_token
    from django.db import connection
    from http_server import Server, Worker, upload, wait_for_job

    settings = connection.settings_dict
    url = (
        f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:"
        f"{settings['PORT'] or 5432}/{settings['NAME']}"
    )
    token = admin_token()
    server, worker = Server(port, 2, 1, url), None
    try:
        worker = Worker(url)
        empty_corpus()
        start = time.perf_counter()
        status, body = upload(port, "/api/v1/imports/", token, path, {"format": "proofbench"})
        if status != 202:
            sys.exit(f"upload: {status} {body}")
        uploaded = time.perf_counter() - start
        job = wait_for_job(port, f"/api/v1/imports/{body['id']}/", token)
        seconds = time.perf_counter() - start
        return {
            "seconds": round(seconds, 2),
            "upload_seconds": round(uploaded, 2),
            "proofs_per_s": round(rows / seconds),
            "worker_peak_mb": round(worker.peak_mb(), 1),
            "web_peak_mb": round(server.peak_mb(), 1),
            "created": job["counts"]["proofs"]["created"],
            "load_average": round(os.getloadavg()[0], 1),
        }
    finally:
        if worker:
            worker.stop()
        server.stop()


def in_process(path: Path, rows: int) -> dict:
    from problems.services import corpus_import

    empty_corpus()
    start = time.perf_counter()
    report = corpus_import(path=path)
    seconds = time.perf_counter() - start
    assert report.ok, report
    return {"seconds": round(seconds, 2), "proofs_per_s": round(rows / seconds)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 rows, one run of each")
    parser.add_argument("--rows", type=int, help="rows of the corpus (default 20,000)")
    parser.add_argument("--repeat", type=int, help="runs of the whole-process pair (default 3)")
    parser.add_argument("--skip-large", action="store_true", help="no memory comparison")
    parser.add_argument("--port", type=int, default=int(os.environ.get("BENCH_HTTP_PORT", 8765)))
    parser.add_argument(
        "--json", type=Path, default=OUT / "bench_import.json", help="where the figures go"
    )
    args = parser.parse_args()
    rows = args.rows or (2000 if args.quick else 20000)
    repeat = args.repeat or (1 if args.quick else 3)
    create_database_if_missing()
    setup_django()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    machine = machine_line()
    small = corpus_file(rows, folder=OUT)
    results: dict = {"machine": machine, "rows": rows, "file_mb": small.stat().st_size / 2**20}

    runs = []
    for _ in range(repeat):
        empty_corpus()
        first, again = whole_process(small, rows), whole_process(small, rows)
        assert first["created"] == rows and again["created"] == 0, (first, again)
        runs.append({"first": first, "again": again})
    runs.sort(key=lambda run: run["first"]["seconds"])
    results["command"] = {"median": runs[len(runs) // 2], "runs": runs}
    results["api"] = through_api(small, rows, args.port)
    assert results["api"]["created"] == rows, results["api"]
    if not args.skip_large:
        large = corpus_file(rows * 5, folder=OUT)
        empty_corpus()
        results["large"] = whole_process(large, rows * 5)
        results["peak_growth_mb"] = round(
            results["large"]["peak_mb"] - results["command"]["median"]["first"]["peak_mb"], 1
        )
    results["in_process"] = in_process(small, rows)
    empty_corpus()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1))

    median = results["command"]["median"]
    print(f"\nImport benchmark{' (--quick)' if args.quick else ''}: {machine}")
    print(f"corpus: {rows:,} rows, {results['file_mb']:.0f} MB (benchmarks/corpus.py)")
    lines = [
        ("manage.py import_corpus, empty corpus", median["first"], "peak_mb"),
        ("manage.py import_corpus, same file again", median["again"], "peak_mb"),
        ("API upload + worker, empty corpus", results["api"], "worker_peak_mb"),
    ]
    if "large" in results:
        lines.append((f"manage.py import_corpus, {rows * 5:,} rows", results["large"], "peak_mb"))
    for label, row, peak in lines:
        print(
            f"{label:>42}: {row['seconds']:7.2f} s {row['proofs_per_s']:7,} proofs/s  "
            f"peak {row[peak]:6.1f} MB  (load {row['load_average']})"
        )
    if repeat > 1:
        firsts = [run["first"]["proofs_per_s"] for run in runs]
        print(f"{'first imports of the runs':>42}: {firsts} (median {statistics.median(firsts)})")
    if "peak_growth_mb" in results:
        print(f"{'peak growth, file five times as large':>42}: {results['peak_growth_mb']:+.1f} MB")
    warm = results["in_process"]
    print(
        f"{'in-process corpus_import (warm, labelled)':>42}: {warm['seconds']:7.2f} s "
        f"{warm['proofs_per_s']:7,} proofs/s"
    )
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
