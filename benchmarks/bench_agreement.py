"""Benchmark: agreement figures of a large campaign (pure computation, no database).

`python benchmarks/bench_agreement.py`: builds a synthetic 0-7 campaign (2,000 double-scored
items, 6 experts in pairs, 12 weeks), then times what the agreement dashboard computes on a
cache miss: the campaign figures, per pair of experts and per week, each with 400 bootstrap
resamples, and ordinal Krippendorff alpha with its interval, in this process (in-process
figures). `--quick`: 500 items, 100 resamples. Prints the machine, date and load average with
the figures; `--write` appends them to benchmarks/RESULTS.md. (The dashboard keeps the result in the cache until a grade, a label or a
gold mark changes, so this is the cost of the first view after a change.)
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only")

import django  # noqa: E402

django.setup()

from benchdb import machine_line  # noqa: E402

from adjudication import agreement  # noqa: E402
from adjudication.metrics import Judgement, PairRow, pair_figures  # noqa: E402

ITEMS, EXPERTS, WEEKS, RESAMPLES = 2000, 6, 12, 400


def synthetic() -> list[PairRow]:
    rng = random.Random(5)
    start = datetime(2026, 1, 5, tzinfo=UTC)
    pairs = []
    for item in range(ITEMS):
        truth = rng.randint(0, 7)
        a, b = rng.sample(range(EXPERTS), 2)
        when = start + timedelta(days=rng.randrange(7 * WEEKS))
        scores = [max(0, min(7, truth + rng.choice([-1, 0, 0, 1, 2]))) for _ in range(2)]
        pairs.append(
            PairRow(
                item,
                Judgement(2 * item, item, a, f"e{a}", scores[0], when, 300),
                Judgement(2 * item + 1, item, b, f"e{b}", scores[1], when, 300),
            )
        )
    return pairs


def main() -> None:
    global ITEMS, RESAMPLES
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 items, 100 resamples")
    parser.add_argument("--write", action="store_true", help="append to benchmarks/RESULTS.md")
    args = parser.parse_args()
    if args.quick:
        ITEMS, RESAMPLES = 500, 100
    labels = [float(v) for v in range(8)]
    pairs = synthetic()
    started = time.perf_counter()
    pair_figures(pairs, labels, Decimal(1), n_resamples=RESAMPLES, seed=0)
    overall = time.perf_counter() - started

    started = time.perf_counter()
    by_pair: dict[tuple[str, str], list[PairRow]] = {}
    for p in pairs:
        by_pair.setdefault(tuple(sorted((p.a.expert, p.b.expert))), []).append(p)
    for rows in by_pair.values():
        pair_figures(rows, labels, Decimal(1), n_resamples=RESAMPLES, seed=0)
    per_pair = time.perf_counter() - started

    started = time.perf_counter()
    by_week: dict = {}
    for p in pairs:
        by_week.setdefault(p.week, []).append(p)
    for rows in by_week.values():
        pair_figures(rows, labels, Decimal(1), n_resamples=RESAMPLES, seed=0)
    per_week = time.perf_counter() - started

    units = []
    for p in pairs:
        unit = [None] * EXPERTS
        unit[p.a.expert_id], unit[p.b.expert_id] = p.a.score, p.b.score
        units.append(unit)
    started = time.perf_counter()
    agreement.krippendorff_alpha_ordinal(units, labels)
    agreement.bootstrap_alpha(units, labels, n_resamples=RESAMPLES)
    alpha = time.perf_counter() - started

    total = overall + per_pair + per_week + alpha
    lines = [
        "",
        f"## Agreement figures, in-process (`bench_agreement.py`{' --quick' if args.quick else ''})",
        f"Machine: {machine_line()}.",
        f"Synthetic 0-7 campaign: {ITEMS} double-scored items, {EXPERTS} experts "
        f"({len(by_pair)} pairs), {len(by_week)} weeks, {RESAMPLES} bootstrap resamples each.",
        "",
        "| part | seconds |",
        "|---|---|",
        f"| campaign figures with intervals | {overall:.2f} |",
        f"| per pair of experts | {per_pair:.2f} |",
        f"| per week | {per_week:.2f} |",
        f"| Krippendorff alpha with interval | {alpha:.2f} |",
        f"| whole dashboard on a cache miss | {total:.2f} |",
    ]
    print("\n".join(lines))
    if args.write:
        with (ROOT / "benchmarks" / "RESULTS.md").open("a") as out:
            out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
