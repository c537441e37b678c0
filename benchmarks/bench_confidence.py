#!/usr/bin/env python3
"""Label confidence, measured: is a label with confidence 0.9 right about 90% of the time?
The rater model is adjudication.estimators.dawid_skene, as estimation.services.confidence fits it
per campaign. Statistics, not speed: no database, runs in seconds.

The simulated campaign (seeded; assumptions):
- 2,000 proofs with a true label on 0 / 0.5 / 1 (45 / 15 / 40%);
- one expert label per proof, from a pool of 8 experts, each right with probability 0.80-0.95
  (wrong: a neighbouring class, or the far one with a third of that chance), and a second
  expert on 20% of the proofs; the final label is the first expert's (as a single-judgement
  label), except on 5% of the proofs, adjudicated to the truth (gold, known to the model);
- a verifier (mean of four samples, each the truth + 0.1 + noise sd 0.25, read as 0 / 0.5 / 1)
  and two graders (biased +0.1 / -0.1, noise sd 0.3 / 0.45); in the correlated setting every
  sample of a proof also shares one error (sd 0.3).
Reported: per confidence bin, the labels in it, their mean confidence and the share that is
right, and the expected calibration error (ECE: the bins' |confidence - accuracy| weighted by
their size); and how many wrong labels the 10% least confident labels hold.

Usage: python benchmarks/bench_confidence.py [--write]
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

from adjudication.estimators import dawid_skene  # noqa: E402

CLASSES = np.array([0.0, 0.5, 1.0])
BINS = (0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0001)


def ternary(values: np.ndarray) -> np.ndarray:
    return np.abs(np.clip(values, 0, 1)[..., None] - CLASSES).argmin(axis=-1)


def campaign(rng: np.random.Generator, size: int, shared_sd: float) -> dict:
    truth = rng.choice(3, size=size, p=[0.45, 0.15, 0.40])
    accuracy = rng.uniform(0.80, 0.95, size=8)
    tasks, workers, labels = [], [], []

    def expert_says(t: int, e: int) -> int:
        if rng.random() < accuracy[e]:
            return int(truth[t])
        others = [c for c in range(3) if c != truth[t]]
        weights = [1.0 if abs(c - truth[t]) == 1 else 1 / 3 for c in others]
        return int(rng.choice(others, p=np.array(weights) / sum(weights)))

    final = np.empty(size, dtype=int)
    for t in range(size):
        first = int(rng.integers(8))
        final[t] = expert_says(t, first)
        tasks.append(t), workers.append(first), labels.append(int(final[t]))
        if rng.random() < 0.2:
            second = int((first + 1 + rng.integers(7)) % 8)
            tasks.append(t), workers.append(second), labels.append(expert_says(t, second))
    gold = {int(t): int(truth[t]) for t in rng.choice(size, size=size // 20, replace=False)}
    for t, klass in gold.items():
        final[t] = klass
    shared = rng.normal(0, shared_sd, size) if shared_sd else np.zeros(size)
    value = CLASSES[truth]
    samples = value[:, None] + 0.1 + shared[:, None] + rng.normal(0, 0.25, (size, 4))
    automatic = [
        ternary(np.clip(samples, 0, 1).mean(axis=1)),
        ternary(value + 0.1 + shared + rng.normal(0, 0.3, size)),
        ternary(value - 0.1 + shared + rng.normal(0, 0.45, size)),
    ]
    for w, said in enumerate(automatic, start=8):
        tasks += list(range(size))
        workers += [w] * size
        labels += [int(s) for s in said]
    return {"truth": truth, "final": final, "gold": gold, "obs": (tasks, workers, labels)}


def measure(shared_sd: float, seed: int, size: int = 2000, *, one_voice: bool = False) -> dict:
    data = campaign(np.random.default_rng(seed), size, shared_sd)
    tasks, workers, labels = data["obs"]
    model = dawid_skene(
        tasks=tasks,
        workers=workers,
        labels=labels,
        n_tasks=size,
        n_workers=11,
        n_classes=3,
        gold=data["gold"],
        weights=[1 / 3 if w >= 8 else 1.0 for w in workers] if one_voice else None,
    )
    confidence = model.posteriors[np.arange(size), data["final"]]
    right = data["final"] == data["truth"]
    rows, ece = [], 0.0
    for low, high in zip(BINS, BINS[1:], strict=False):
        inside = (confidence >= low) & (confidence < high)
        if not inside.any():
            continue
        mean, share = float(confidence[inside].mean()), float(right[inside].mean())
        ece += inside.mean() * abs(mean - share)
        rows.append((low, min(high, 1.0), int(inside.sum()), mean, share))
    least = np.argsort(confidence)[: size // 10]
    return {
        "rows": rows,
        "ece": ece,
        "wrong": int((~right).sum()),
        "wrong_in_least": int((~right[least]).sum()),
        "label_accuracy": float(right.mean()),
    }


def section(results: list[tuple[str, dict]], seconds: float, size: int) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## Label confidence, calibrated? (`bench_confidence.py`, {now})",
        "",
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}; the whole run {seconds:.1f} s (no database). Assumptions "
        f"(the script's docstring has them whole): {size:,} proofs on 0 / 0.5 / 1, one label each by "
        "one of 8 experts right 80-95% of the time (a second expert on 20%), 5% adjudicated to "
        "the truth as gold; a verifier (4 samples) and two graders; the correlated setting adds "
        "an error shared by a proof's samples (sd 0.3).",
        "",
        "| setting | confidence bin | labels | mean confidence | share right |",
        "| --- | --- | --- | --- | --- |",
    ]
    for title, result in results:
        for low, high, n, mean, share in result["rows"]:
            lines.append(f"| {title} | {low:.2f}-{high:.2f} | {n} | {mean:.3f} | {share:.3f} |")
    lines += [
        "",
        "| setting | labels right | expected calibration error | wrong labels among the 10% "
        "least confident |",
        "| --- | --- | --- | --- |",
    ]
    for title, result in results:
        lines.append(
            f"| {title} | {result['label_accuracy']:.1%} | {result['ece']:.3f} | "
            f"{result['wrong_in_least']} of {result['wrong']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="append the section to RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="200 proofs a setting, not 2,000")
    args = parser.parse_args()
    size = 200 if args.quick else 2000
    started = time.perf_counter()
    results = [
        ("independent errors", measure(0.0, seed=3, size=size)),
        ("error shared by a proof's samples (sd 0.3)", measure(0.3, seed=3, size=size)),
        ("independent, machines as one voice", measure(0.0, seed=3, size=size, one_voice=True)),
        ("shared error, machines as one voice", measure(0.3, seed=3, size=size, one_voice=True)),
    ]
    text = section(results, time.perf_counter() - started, size)
    print(text)
    if args.write:
        with (HERE / "RESULTS.md").open("a", encoding="utf-8") as handle:
            handle.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
