#!/usr/bin/env python
"""Export benchmark: 20,000 graded proofs, each with a final label, to JSONL and Parquet.

Standalone: DATABASE_URL from the environment (PostgreSQL; the database is created when missing
and migrated first).
Generates the corpus with ../shared/bench/gen_corpus.py (--n 20000 --seed 1234), loads it with
bulk inserts under the campaign `bench-export` (problems `BENCH-EXPORT-*`, replaced on every run),
analyses the tables it wrote (as autovacuum would; the shared bench server runs with autovacuum
off, and without statistics PostgreSQL plans every batch as a scan of the whole tables), then runs
each export in a fresh child process and reports rows/s, rows per CPU-second of the exporting
process and that process's own peak RSS (VmHWM: `ru_maxrss` would also count the pages the child
shared with the benchmark's parent when it was forked).

    DATABASE_URL=postgres://... python benchmarks/bench_export.py [--n 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

from benchdb import create_database_if_missing, setup_django

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
OUT = ROOT / "benchmarks" / "out" / "export"
SLUG = "bench-export"
PREFIX = "BENCH-EXPORT-"
BATCH = 2000


def generate(n: int) -> Path:
    folder = OUT / f"corpus-{n}"
    tasks = folder / "tasks.jsonl"
    if not tasks.is_file():
        subprocess.run(
            [
                sys.executable,
                str(SHARED / "bench" / "gen_corpus.py"),
                "--n",
                str(n),
                "--seed",
                "1234",
                "--out-dir",
                str(folder),
            ],
            check=True,
        )
    return tasks


def load(tasks: Path) -> int:
    """Bulk-loads the corpus: problem, reference solution, proof, item, grade and final label."""
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection, transaction

    from adjudication.models import FinalLabel
    from annotation.models import Campaign, Grade, Item
    from problems.models import Problem, Proof, ReferenceSolution

    call_command("migrate", verbosity=0)
    Campaign.objects.filter(slug=SLUG).delete()
    Problem.objects.filter(external_id__startswith=PREFIX).delete()
    expert, _ = User.objects.get_or_create(username="bench-export-expert")
    campaign = Campaign.objects.create(slug=SLUG, name="Export benchmark")

    def sha(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    count = 0
    with tasks.open(encoding="utf-8") as handle, transaction.atomic():
        while True:
            chunk = [json.loads(line) for _, line in zip(range(BATCH), handle, strict=False)]
            if not chunk:
                break
            problems = Problem.objects.bulk_create(
                [
                    Problem(
                        external_id=PREFIX + t["problem_id"],
                        contest="Bench",
                        year=2025,
                        statement=t["problem"],
                        source="bench",
                        metadata={"licence": "CC0-1.0"},
                    )
                    for t in chunk
                ]
            )
            ReferenceSolution.objects.bulk_create(
                [
                    ReferenceSolution(
                        problem=p,
                        text=t["reference_solution"],
                        text_hash=sha(t["reference_solution"]),
                    )
                    for p, t in zip(problems, chunk, strict=True)
                ]
            )
            proofs = Proof.objects.bulk_create(
                [
                    Proof(
                        problem=p,
                        generator=t["generator"],
                        sample_key="0",
                        sample_index=0,
                        text=t["model_solution"],
                        text_hash=sha(t["model_solution"]),
                    )
                    for p, t in zip(problems, chunk, strict=True)
                ]
            )
            items = Item.objects.bulk_create([Item(campaign=campaign, proof=p) for p in proofs])
            scores = [
                Decimal(int(hashlib.md5(p.text_hash.encode()).hexdigest(), 16) % 8) for p in proofs
            ]
            grades = Grade.objects.bulk_create(
                [
                    Grade(item=i, expert=expert, status="submitted", score=s, seconds_spent=300)
                    for i, s in zip(items, scores, strict=True)
                ]
            )
            FinalLabel.objects.bulk_create(
                [
                    FinalLabel(
                        item=i,
                        value=g.score,
                        scale="0-7",
                        source="single",
                        policy="bench",
                        grade_ids=[g.pk],
                    )
                    for i, g in zip(items, grades, strict=True)
                ]
            )
            count += len(chunk)
    with connection.cursor() as cursor:
        for model in (Problem, ReferenceSolution, Proof, Item, Grade, FinalLabel):
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
    return count


def peak_rss_mb() -> float:
    """This process's peak resident memory, in MB (Linux: VmHWM, which starts afresh at exec)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def export_once(fmt: str, file_type: str, generator: str = "") -> dict:
    """Runs in the child process: one export, its time and this process's peak RSS."""
    from annotation.models import Campaign
    from exports.formats import ExportOptions
    from exports.services import dataset_write

    campaign = Campaign.objects.get(slug=SLUG)
    out = OUT / f"{SLUG}-{fmt}.{file_type}"
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    manifest = dataset_write(
        campaign=campaign,
        fmt=fmt,
        file_type=file_type,
        options=ExportOptions(generator=generator),
        out=out,
    )
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu_before
    rows = manifest["counts"]["rows"]
    return {
        "format": fmt,
        "file_type": file_type,
        "filter": f"generator={generator}" if generator else "",
        "rows": rows,
        "seconds": round(seconds, 2),
        "rows_per_second": round(rows / seconds),
        "rows_per_cpu_second": round(rows / cpu),
        "load_average": round(os.getloadavg()[0], 1),
        "size_mb": round(out.stat().st_size / 2**20, 1),
        "peak_rss_mb": peak_rss_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--skip-load", action="store_true", help="Reuse the loaded corpus.")
    parser.add_argument(
        "--repeat", type=int, default=3, help="Runs of each export (the median is reported)."
    )
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("Set DATABASE_URL to a PostgreSQL database (it is migrated and written to).")
    if not args.child:
        create_database_if_missing()
    setup_django()
    if args.child:
        print(json.dumps(export_once(*args.child)))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    if not args.skip_load:
        tasks = generate(args.n)
        start = time.perf_counter()
        loaded = load(tasks)
        print(f"loaded {loaded} graded proofs in {time.perf_counter() - start:.1f} s")
    results = []
    # The last two read one generator's eighth of the corpus: peak memory should not change.
    runs = [
        ("proofbench", "jsonl"),
        ("proofbench", "parquet"),
        ("dv", "jsonl"),
        ("dv", "parquet"),
        ("proofbench", "jsonl", "model-a-7b"),
        ("proofbench", "parquet", "model-a-7b"),
    ]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for run in runs:
        tries = []
        for _ in range(args.repeat):
            child = subprocess.run(
                [sys.executable, __file__, "--child", *run],
                check=True,
                capture_output=True,
                text=True,
                env=os.environ,
            )
            tries.append(json.loads(child.stdout.strip().splitlines()[-1]))
        result = dict(tries[0])
        for key in ("seconds", "rows_per_second", "rows_per_cpu_second", "load_average"):
            result[key] = statistics.median(t[key] for t in tries)
        result["peak_rss_mb"] = max(t["peak_rss_mb"] for t in tries)
        result["tries"] = tries
        results.append(result)
        print(
            f"{result['format']:>10} {result['file_type']:<8} {result['filter']:<20} "
            f"{result['rows']} rows, median of {len(tries)}: {result['seconds']} s, "
            f"{result['rows_per_second']:.0f} rows/s ({result['rows_per_cpu_second']:.0f} per "
            f"exporter CPU-second, load {result['load_average']}), peak RSS "
            f"{result['peak_rss_mb']} MB, file {result['size_mb']} MB"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    (OUT / "results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
