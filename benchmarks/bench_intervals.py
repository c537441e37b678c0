#!/usr/bin/env python3
"""Scores with honest intervals, measured: do the 95% intervals of a generator's mean score
cover the true mean 95% of the time, and how wide are they, for the experts-only bootstrap and
the prediction-powered (PPI++) interval of adjudication/estimators.py (the functions the
platform's scores page calls)?

Statistics, not speed: needs no database and runs in seconds.

Each trial draws a campaign: N proofs of one generator, n of them labelled by experts (taken to
be right: their label is the proof's true score), and every proof graded automatically. The
target is the generator's true mean score (known exactly from the simulation's distribution).
Assumptions, per setting:

1. simulated, independent errors: true scores on 0-1 in eighths of 0-7 (0, 1/7, ..., 1) with
   weights favouring the ends, as proofs are mostly wrong or right; the automatic grade is the
   mean of k = 4 verifier samples, each the truth + a bias of +0.1 + its own noise (sd 0.25),
   clipped to 0-1.
2. simulated, correlated errors: the same, plus an error shared by the proof's four samples
   (sd 0.3), so averaging samples does not remove it: the grader is confidently wrong on some
   proofs.
3. real-shaped: the six (human rating, mean automatic rating) pairs of the DeepSeekMath-V2
   outputs in ../shared/fixtures/real/deepseek_math_v2/ (human ratings normalised to 0-1 by their
   maximum: 7, or 10 / 21 for Putnam / CMO) are the population: each proof is one of them, drawn
   uniformly; the target is their mean. Six pairs: a check that nothing breaks on real values
   with a grader that is badly wrong on some (IMO2025-6: human 0, automatic 1), not a
   measurement of that grader.

Usage: python benchmarks/bench_intervals.py [--write] [--trials 1000]
(--write appends the section to RESULTS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from adjudication.estimators import (  # noqa: E402
    bootstrap_mean_interval,
    labels_needed,
    ppi_mean_interval,
)

REAL = Path(os.environ.get("PROOFMARK_REAL_FIXTURES", HERE.parent.parent / "shared/fixtures/real"))
VALUES = np.arange(8) / 7
WEIGHTS = np.array([0.30, 0.08, 0.06, 0.05, 0.05, 0.06, 0.10, 0.30])
NATIVE_MAX = {"Putnam": 10, "CMO": 21}
SAMPLES = 4


def simulated(rng: np.random.Generator, size: int, shared_sd: float) -> tuple[np.ndarray, ...]:
    truth = rng.choice(VALUES, size=size, p=WEIGHTS)
    shared = rng.normal(0, shared_sd, size=size) if shared_sd else np.zeros(size)
    samples = truth[:, None] + 0.1 + shared[:, None] + rng.normal(0, 0.25, (size, SAMPLES))
    return truth, np.clip(samples, 0, 1).mean(axis=1)


def real_pairs() -> np.ndarray:
    pairs = []
    for path in sorted((REAL / "deepseek_math_v2").glob("*_outputs_sample.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            name = record["problem_idx"]
            maximum = next((m for k, m in NATIVE_MAX.items() if name.startswith(k)), 7)
            rating = record["model_prediction"]
            pairs.append(
                (rating["human_rating"] / maximum, float(rating["average_automatic_rating"]))
            )
    return np.array(pairs)


def trial(truth, machine, labelled: int, rng: np.random.Generator, seed: int) -> dict:
    order = rng.permutation(len(truth))
    gold, rest = order[:labelled], order[labelled:]
    human = bootstrap_mean_interval(truth[gold], seed=seed)
    ppi = ppi_mean_interval(truth[gold], machine[gold], machine[rest])
    return {"human": human, "ppi": ppi}


def measure(setting: str, *, trials: int, size: int, labelled: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    pairs = real_pairs() if setting == "real" else None
    # the true mean: of the six real pairs, or of the simulation's score distribution
    target = float(pairs[:, 0].mean() if pairs is not None else (VALUES * WEIGHTS).sum())
    found = {"human": [], "ppi": []}
    needed = {"human": [], "ppi": []}
    for t in range(trials):
        if pairs is not None:
            drawn = pairs[rng.integers(0, len(pairs), size=size)]
            truth, machine = drawn[:, 0], drawn[:, 1]
        else:
            truth, machine = simulated(rng, size, 0.3 if setting == "correlated" else 0.0)
        result = trial(truth, machine, labelled, rng, seed=t)
        for name, interval in result.items():
            if interval is None:
                continue
            found[name].append((interval.low <= target <= interval.high, interval.width))
            needed[name].append(labels_needed(interval, 0.1) or 0)
    out = {}
    for name, rows in found.items():
        covered = np.array([c for c, _ in rows], dtype=float)
        widths = np.array([w for _, w in rows])
        out[name] = {
            "coverage": float(covered.mean()),
            "coverage_se": float(covered.std() / np.sqrt(len(covered))),
            "width": float(widths.mean()),
            "needed": float(np.median(needed[name])),
            "trials": len(rows),
        }
    return out


SETTINGS = (
    ("independent", "simulated, independent sample errors"),
    ("correlated", "simulated, error shared by a proof's samples (sd 0.3)"),
    ("real", "real-shaped (DeepSeekMath-V2, 6 pairs)"),
)


def section(results: list[tuple[str, int, int, dict]], trials: int, seconds: float) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## Scores with honest intervals (`bench_intervals.py`, {now})",
        "",
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}; {trials} trials per row, the whole run {seconds:.1f} s "
        "(no database). Nominal level 95%; target coverage >= 94%. Scores on 0-1 (a 0-7 score "
        "divided by 7). Experts-only: percentile bootstrap (2000 resamples) of the expert "
        "labels. PPI++: the expert labels correct the automatic grades of every proof (power-"
        "tuned, adjudication/estimators.py). Coverage +- its standard error over the trials; "
        "width is the mean full width; 'labels for 0.1': the median number of expert labels "
        "an interval 0.1 wide would need at the spread seen.",
        "",
        "Assumptions: see the docstring of `bench_intervals.py` (true scores favour 0 and 1; "
        "automatic grade = mean of 4 samples, each truth + 0.1 bias + noise sd 0.25, clipped; "
        "correlated: plus an error shared by the proof's samples, sd 0.3; experts are right; "
        "the labelled proofs are a uniform random sample of the campaign's).",
        "",
        "| setting | proofs | expert labels | interval | coverage | mean width | labels for 0.1 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for title, size, labelled, out in results:
        for name, words in (("human", "experts only (bootstrap)"), ("ppi", "PPI++")):
            row = out[name]
            lines.append(
                f"| {title} | {size} | {labelled} | {words} | {row['coverage']:.1%} "
                f"+- {row['coverage_se']:.1%} | {row['width']:.3f} | {row['needed']:.0f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="append the section to RESULTS.md")
    parser.add_argument("--trials", type=int, help="trials per row (default 1,000; 100 --quick)")
    parser.add_argument("--quick", action="store_true", help="100 trials a row")
    args = parser.parse_args()
    args.trials = args.trials or (100 if args.quick else 1000)
    started = time.perf_counter()
    results = []
    for key, title in SETTINGS:
        for labelled in (20, 50):
            size = 500
            out = measure(key, trials=args.trials, size=size, labelled=labelled, seed=11)
            results.append((title, size, labelled, out))
    text = section(results, args.trials, time.perf_counter() - started)
    print(text)
    if args.write:
        with (HERE / "RESULTS.md").open("a", encoding="utf-8") as handle:
            handle.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
