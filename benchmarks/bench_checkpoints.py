#!/usr/bin/env python3
"""Checkpoint intervals, measured: do the 95% intervals of the checkpoints page (and of the
export's checkpoints file) cover the checkpoint's true agreement and discrimination 95% of the
time? The intervals are adjudication.checkpoints' own (percentile bootstrap over proofs, 1000
resamples): percent agreement and Krippendorff's ordinal alpha over the double-scored proofs,
Spearman's correlation of the mean award with the final label. Statistics, not speed: no
database (Django is set up only to import the module).

A simulated checkpoint of one scheme version (one problem), awards 0, 1 or 2 points:
- each proof has a quality q, uniform 0-1; its true award is 0 below 0.3, 1 up to 0.6, 2 above;
- two experts grade each proof; each awards the true level with chance `accuracy` and else a
  neighbouring level (the nearer end when the true level is one), independently;
- the final label (0-7) is 7q plus a normal error (sd 0.7 steps), rounded and clipped.
The truth each interval should cover is the figure over 200,000 proofs of the same checkpoint
(the population value). Two checkpoints: a clear one (accuracy 0.85) and an ambiguous one
(0.55, alpha about 0.3); 5 to 100 double-scored proofs (5 is the page's least for a figure).
Targets: coverage at least 93% (nominal 95%), widths reported beside. An interval not given (a
resample without spread in more than half of the draws) counts as not covering, and the share
is shown.

Usage: python benchmarks/bench_checkpoints.py [--write] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402 (adjudication.checkpoints imports models; no database is used)

django.setup()

from adjudication.checkpoints import (  # noqa: E402
    bootstrap_ordinal_alpha,
    bootstrap_percent_agreement,
    bootstrap_spearman,
    coincidence_rows,
    ordinal_alpha_rows,
)

LEVELS = [0.0, 1.0, 2.0]
SIZES = (5, 10, 20, 50, 100)
CHECKPOINTS = (("clear", 0.85), ("ambiguous", 0.55))
POPULATION = 200_000
TARGET = 0.93


def draw(n: int, accuracy: float, rng: np.random.Generator):
    """n proofs: the two experts' awards [n, 2] and the final labels [n]."""
    q = rng.uniform(0, 1, n)
    true = np.where(q > 0.6, 2, np.where(q > 0.3, 1, 0))
    awards = np.empty((n, 2))
    for e in range(2):
        wrong = rng.random(n) >= accuracy
        step = np.where(rng.random(n) < 0.5, -1, 1)
        step = np.where(true == 0, 1, np.where(true == 2, -1, step))
        awards[:, e] = np.where(wrong, true + step, true)
    label = np.clip(np.rint(7 * q + rng.normal(0, 0.7, n)), 0, 7)
    return awards, label


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (from 1), ties shared, for a long vector."""
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2)[inverse]


def population(accuracy: float, seed: int = 12345) -> dict[str, float]:
    awards, label = draw(POPULATION, accuracy, np.random.default_rng(seed))
    pairs, counts = np.unique(awards, axis=0, return_counts=True)  # the few award pairs
    rows = coincidence_rows([list(map(float, pair)) for pair in pairs], LEVELS)
    alpha = float(ordinal_alpha_rows((counts @ rows)[None], len(LEVELS))[0])
    rx, ry = _ranks(awards.mean(axis=1)), _ranks(label)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return {
        "agreement": float(np.mean(awards[:, 0] == awards[:, 1])),
        "alpha": alpha,
        "discrimination": float((rx * ry).sum() / np.sqrt((rx * rx).sum() * (ry * ry).sum())),
    }


def measure(n: int, accuracy: float, truth: dict[str, float], reps: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    found = {name: {"covered": 0, "missing": 0, "widths": []} for name in truth}
    for rep in range(reps):
        awards, label = draw(n, accuracy, rng)
        units = [list(map(float, a)) for a in awards]
        intervals = {
            "agreement": bootstrap_percent_agreement(units, seed=rep),
            "alpha": bootstrap_ordinal_alpha(units, LEVELS, seed=rep),
            "discrimination": bootstrap_spearman(awards.mean(axis=1), label, seed=rep),
        }
        for name, interval in intervals.items():
            if interval is None:
                found[name]["missing"] += 1
                continue
            low, high = interval
            found[name]["covered"] += low <= truth[name] <= high
            found[name]["widths"].append(high - low)
    return {
        name: {
            "coverage": f["covered"] / reps,
            "se": float(
                np.sqrt(max(f["covered"] / reps * (1 - f["covered"] / reps), 1e-12) / reps)
            ),
            "missing": f["missing"] / reps,
            "width": float(np.mean(f["widths"])) if f["widths"] else float("nan"),
        }
        for name, f in found.items()
    }


def section(rows, truths, seconds: float, reps: int) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    missed = sum(1 for _, _, m in rows for figure in m.values() if figure["coverage"] < TARGET)
    total = sum(len(m) for _, _, m in rows)
    truth_words = "; ".join(
        f"{name}: agreement {t['agreement']:.3f}, alpha {t['alpha']:.3f}, discrimination "
        f"{t['discrimination']:.3f}"
        for name, t in truths.items()
    )
    lines = [
        f"### Checkpoint intervals (`bench_checkpoints.py`, {now})",
        "",
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}, numpy {np.__version__}; {reps} simulated scheme versions a "
        f"cell, the whole run {seconds:.0f} s (no database). A checkpoint of 0/1/2 points, two "
        "experts a proof, each right with the checkpoint's accuracy and else one level off; final "
        "labels 0-7 following the proof's quality (the script's docstring has the recipe). The "
        "intervals are the page's own: 95% percentile bootstrap over proofs (1000 resamples). "
        f"Population values (200,000 proofs): {truth_words}. Target coverage >= 93%; "
        f"**{missed} of {total} figures x cells miss** (marked *missed*). Coverage +- its "
        "standard error; width: mean full width; 'none' the share of draws with no interval "
        "(counted as not covering).",
        "",
        "| checkpoint | double-scored proofs | agreement: coverage | width | alpha: coverage | "
        "width | none | discrimination: coverage | width |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def cov(f):
        mark = "" if f["coverage"] >= TARGET else " *missed*"
        return f"{f['coverage']:.1%} +- {f['se']:.1%}{mark}"

    for name, n, m in rows:
        a, al, d = m["agreement"], m["alpha"], m["discrimination"]
        lines.append(
            f"| {name} | {n} | {cov(a)} | {a['width']:.3f} | {cov(al)} | {al['width']:.3f} | "
            f"{al['missing']:.1%} | {cov(d)} | {d['width']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="append the section to RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="100 draws a cell, not 1000")
    args = parser.parse_args()
    reps = 100 if args.quick else 1000
    started = time.perf_counter()
    truths = {name: population(accuracy) for name, accuracy in CHECKPOINTS}
    rows = []
    for name, accuracy in CHECKPOINTS:
        for n in SIZES:
            m = measure(n, accuracy, truths[name], reps, seed=n)
            rows.append((name, n, m))
            print(name, n, {k: round(v["coverage"], 3) for k, v in m.items()}, flush=True)
    text = section(rows, truths, time.perf_counter() - started, reps)
    print(text)
    if args.write:
        with (HERE / "RESULTS.md").open("a", encoding="utf-8") as handle:
            handle.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
