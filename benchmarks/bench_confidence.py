#!/usr/bin/env python3
"""Label confidence, measured on campaigns the rater models do not assume: is a label stated at
0.9 right about 90% of the time? The rater model is the one estimation.services.confidence fits
per campaign (adjudication.rater_models.rater_model_choose: candidates chosen by held-out
calibration, bagged, tempered); "Dawid-Skene as before" is the plain model the fit used until
issue 33, on the same campaigns. Statistics, not speed: no database.

The campaigns (benchmarks/simulated_campaigns.py has the whole recipe): 0-7, 40% of the proofs
double-scored and 60% single; 4 or 8 experts of accuracy 0.5-0.8 and severities up to +-0.35
steps; two experts who share a bias and err together; two automatic graders (one voice) whose
error grows with the proof's length and is shared by a problem's proofs; problems of 1, 1-16 or
16 samples; 20 to 2,000 expert labels. Disagreements are adjudicated (gold), and 5% of the
proofs are planted gold items. Each cell pools the non-gold labels of enough seeded campaigns
for about 1,500 labels.

Targets in every cell: labels stated at least 0.9 right at least 87% of the time, expected
calibration error (10 equal-width bins) at most 0.05. A cell that misses is marked.

Usage: python benchmarks/bench_confidence.py [--write] [--quick] [--sizes 20,100]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.simulated_campaigns import Shape, measure, measure_before, simulate  # noqa: E402

SIZES = (20, 100, 500, 2000)
EXPERTS = (4, 8)
SAMPLES = ((1, 1), (1, 16), (16, 16))


def seeds_for(labels: int, pooled: int) -> range:
    return range(max(2, math.ceil(pooled / (0.6 * labels))))


def fit_seconds() -> float:
    """The fit's time on one campaign of 2,000 expert labels (8 experts, two graders)."""
    from adjudication.rater_models import rater_model_choose

    campaign = simulate(Shape(labels=2000, experts=8), 99)
    started = time.perf_counter()
    rater_model_choose(campaign.obs, seed=99)
    return time.perf_counter() - started


def section(rows, seconds: float, fit_time: float, pooled: int) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    missed = sum(not r[1].passes for r in rows)
    lines = [
        f"## Label confidence on campaigns the models do not assume (`bench_confidence.py`, {now})",
        "",
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}, numpy {np.__version__}; the whole run {seconds:.0f} s (no "
        f"database), shared with other jobs. One fit of a campaign of 2,000 expert labels (8 "
        f"experts, 2 graders; five candidates x five folds; bootstrap fits only under 300 items): "
        f"{fit_time:.1f} s.",
        "",
        "The campaigns (the script's docstring and benchmarks/simulated_campaigns.py have them "
        "whole): 0-7; 40% double-scored, 60% single; experts of accuracy 0.5-0.8 with different "
        "severities; two experts sharing a bias and erring together; two graders as one voice "
        "whose error grows with proof length and is shared within a problem; disagreements "
        f"adjudicated to the truth; 5% planted gold. Each cell pools about {pooled:,} non-gold "
        "labels from seeded campaigns. Targets: labels stated >= 0.9 right >= 87%, ECE <= 0.05. "
        f"**{missed} of {len(rows)} cells miss** (marked *missed*).",
        "",
        "| expert labels | experts | samples a problem | campaigns | labels | stated >= 0.9 | "
        "of them right | ECE | mean stated | right | models chosen | verdict | "
        "Dawid-Skene as before: >= 0.9 right, ECE |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for shape, m, before in rows:
        low, high = shape.samples
        samples = str(low) if low == high else f"{low}-{high}"
        right = "-" if m.confident_right is None else f"{m.confident_right:.1%}"
        chosen = ", ".join(f"{k} {v}" for k, v in sorted(m.chosen.items(), key=lambda kv: -kv[1]))
        b_right = "-" if before[0] is None else f"{before[0]:.1%}"
        lines.append(
            f"| {shape.labels:,} | {shape.experts} | {samples} | {m.campaigns} | {m.labels:,} | "
            f"{m.confident:,} | {right} | {m.ece:.3f} | {m.mean_confidence:.3f} | "
            f"{m.accuracy:.1%} | {chosen} | {'met' if m.passes else '*missed*'} | "
            f"{b_right}, {before[1]:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="append the section to RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="about 300 labels a cell")
    parser.add_argument(
        "--sizes",
        default=",".join(str(n) for n in SIZES),
        help="expert labels a campaign, comma-separated (default: %(default)s)",
    )
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",") if n.strip()]
    pooled = 300 if args.quick else 1500
    started = time.perf_counter()
    rows = []
    for labels in sizes:
        for experts in EXPERTS:
            for samples in SAMPLES:
                shape = replace(Shape(), labels=labels, experts=experts, samples=samples)
                seeds = seeds_for(labels, pooled)
                m = measure(shape, seeds=seeds)
                rows.append((shape, m, measure_before(shape, seeds)))
                print(shape.title(), m.confident_right, round(m.ece, 3), flush=True)
    text = section(rows, time.perf_counter() - started, fit_seconds(), pooled)
    print(text)
    if args.write:
        with (HERE / "RESULTS.md").open("a", encoding="utf-8") as handle:
            handle.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
