#!/usr/bin/env python3
"""Score intervals valid by design, measured: do the 95% intervals of a generator's mean score
cover the true mean at least 93% of the time, with routing on and off, on campaign shapes the
estimators do not assume? The estimators and the sampling design are the platform's own
(adjudication/estimators.py: `pps_probabilities`, `pareto_sample`, `ipw_mean_interval`,
`active_ppi_mean_interval`, the functions estimation.routing and the scores page call).

Statistics, not speed: pure numpy, no database (the coverage simulation needs thousands of
campaigns; the app's own path from a routed campaign to its interval is tested through the
services in tests/estimation/test_design.py).

Each trial draws a campaign of N = 4,000 proofs of one generator:
- problems with m samples each (m = 1, 4 or 16; N / m problems). A problem has a difficulty
  shared by its samples (true scores correlate within a problem) and an automatic-grader error
  shared by its samples (sd 0.15 on 0-1): a problem's samples share errors.
- true scores on 0-1 in sevenths (a 0-7 score / 7): round(7 sigmoid(1.6 (difficulty + own)))/7,
  difficulty and own effect standard normal: mostly near 0 or 1.
- each proof has a length (log-normal); the automatic score is the truth + 0.08 bias + the
  problem's shared error + the proof's own error whose sd grows with the length and is larger
  on flawed proofs ((0.05 + 0.15 length) (1.5 - truth), at most 0.5), clipped to 0-1: grader
  errors grow with proof length, and routing's favourites score lower than the rest.
- routing off: n proofs drawn uniformly (simple random sample). Routing on: the platform's
  design: 25% of the budget uniform, the rest proportional to an uncertainty that tracks the
  grader's error sd (the spread of its samples, with noise), drawn by Pareto pi-ps; the recorded
  probabilities are what the estimators weight by.
- experts are right (their label is the true score).
The target is the generator's true mean score (the distribution's mean, computed once from 4
million draws): the intervals must cover what a new campaign of the generator would score,
not only this campaign's proofs.

Usage: python benchmarks/bench_intervals.py [--write] [--trials 1000] [--quick]
(--write puts the section at the top of RESULTS.md's interval sections: today's figures first).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from adjudication.estimators import (  # noqa: E402
    active_ppi_mean_interval,
    ipw_mean_interval,
    pareto_sample,
    pps_probabilities,
)

N_PROOFS = 4000
UNIFORM_SHARE = 0.25
TARGET_COVERAGE = 0.93
SAMPLES_PER_PROBLEM = (1, 4, 16)
LABELS = (20, 100, 500, 2000)


@dataclass(frozen=True)
class Campaign:
    truth: np.ndarray
    machine: np.ndarray
    uncertainty: np.ndarray
    problem: np.ndarray


def _true_scores(rng: np.random.Generator, difficulty: np.ndarray) -> np.ndarray:
    latent = 1.6 * (difficulty + rng.standard_normal(len(difficulty)))
    return np.round(7 / (1 + np.exp(-latent))) / 7


def true_mean() -> float:
    rng = np.random.default_rng(20261202)
    return float(_true_scores(rng, rng.standard_normal(4_000_000)).mean())


def draw_campaign(rng: np.random.Generator, *, size: int, per_problem: int) -> Campaign:
    problems = size // per_problem
    problem = np.repeat(np.arange(problems), per_problem)
    difficulty = rng.standard_normal(problems)[problem]
    truth = _true_scores(rng, difficulty)
    shared = rng.normal(0, 0.15, problems)[problem]
    length = rng.lognormal(0.0, 0.6, size)
    # longer proofs and flawed proofs are where graders err (and hesitate) most
    error_sd = np.minimum(0.5, (0.05 + 0.15 * length) * (1.5 - truth))
    machine = np.clip(truth + 0.08 + shared + rng.normal(0, 1, size) * error_sd, 0, 1)
    # what routing sees: the spread of the grader's samples, a noisy reading of its error sd
    uncertainty = np.clip(error_sd * rng.lognormal(0, 0.3, size), 0, 1)
    return Campaign(truth, machine, uncertainty, problem)


def design(
    rng: np.random.Generator, campaign: Campaign, labels: int, routing: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(labelled mask, inclusion probabilities) as the platform draws them."""
    size = len(campaign.truth)
    if routing:
        pi = pps_probabilities(campaign.uncertainty, labels, uniform_share=UNIFORM_SHARE)
    else:
        pi = np.full(size, labels / size)
    return pareto_sample(pi, rng.random(size), labels), pi


def trial(rng: np.random.Generator, *, per_problem: int, labels: int, routing: bool) -> dict:
    campaign = draw_campaign(rng, size=N_PROOFS, per_problem=per_problem)
    chosen, pi = design(rng, campaign, labels, routing)
    experts = ipw_mean_interval(campaign.truth[chosen], pi[chosen], campaign.problem[chosen])
    values = np.where(chosen, campaign.truth, np.nan)
    ppi = active_ppi_mean_interval(chosen, values, campaign.machine, pi, campaign.problem)
    out = {"experts": experts, "ppi": ppi}
    if routing:
        # before designs were recorded: the n most uncertain, their plain mean (no weights, no
        # clusters), for comparison only
        top = np.argsort(-campaign.uncertainty, kind="stable")[:labels]
        out["before"] = ipw_mean_interval(campaign.truth[top], np.ones(labels), np.arange(labels))
    return out


def measure(*, per_problem: int, labels: int, routing: bool, trials: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, per_problem, labels, int(routing)])
    target = TRUE_MEAN
    rows: dict[str, list[tuple[bool, float]]] = {"experts": [], "ppi": [], "before": []}
    for _ in range(trials):
        for name, interval in trial(
            rng, per_problem=per_problem, labels=labels, routing=routing
        ).items():
            if interval is not None:
                rows[name].append((interval.low <= target <= interval.high, interval.width))
    out = {}
    for name, found in rows.items():
        covered = np.array([c for c, _ in found], dtype=float)
        out[name] = {
            "coverage": float(covered.mean()) if len(covered) else float("nan"),
            "coverage_se": float(covered.std() / np.sqrt(len(covered))) if len(covered) else 0,
            "width": float(np.mean([w for _, w in found])) if found else float("nan"),
            "trials": len(found),
        }
    return out


TRUE_MEAN = true_mean()


def cells():
    for routing in (False, True):
        for per_problem in SAMPLES_PER_PROBLEM:
            for labels in LABELS:
                yield routing, per_problem, labels


def section(results: list[tuple[bool, int, int, dict]], trials: int, seconds: float) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    missed = [
        (routing, m, n, name)
        for routing, m, n, out in results
        for name in ("experts", "ppi")
        if not out[name]["coverage"] >= TARGET_COVERAGE
    ]
    lines = [
        f"## Score intervals valid by design (`bench_intervals.py`, {now})",
        "",
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}; {trials} simulated campaigns per cell, the whole run "
        f"{seconds:.0f} s (pure numpy, no database). Campaigns of {N_PROOFS:,} proofs of one "
        "generator; problems with 1, 4 or 16 samples sharing a difficulty and a grader error; "
        "grader errors that grow with proof length; experts right. Routing off: a uniform "
        f"sample of the expert labels; on: the platform's design ({UNIFORM_SHARE:.0%} of the "
        "budget uniform, the rest proportional to uncertainty, Pareto pi-ps, each label "
        "weighted by 1 / its recorded probability). Experts only: Hajek (IPW) mean; PPI: "
        "active (IPW) prediction-powered mean, power-tuned; both cluster-robust over problems, "
        "t(labelled problems - 1). 'Before': what routing did before designs were recorded "
        "(the n most uncertain proofs, their plain mean and t interval), for comparison; not "
        f"a target. Nominal 95%; target coverage >= {TARGET_COVERAGE:.0%}. Coverage +- "
        "its standard error; width: mean full width on 0-1. The target is the generator's true "
        f"mean ({TRUE_MEAN:.4f}), not the campaign's.",
        "",
        "| routing | samples a problem | expert labels | experts only: coverage | width "
        "| PPI: coverage | width | before (top-n, unweighted): coverage |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for routing, m, n, out in results:
        e, p = out["experts"], out["ppi"]

        def mark(row):
            flag = "" if row["coverage"] >= TARGET_COVERAGE else " **missed**"
            return f"{row['coverage']:.1%} +- {row['coverage_se']:.1%}{flag}"

        before = out["before"]
        old = f"{before['coverage']:.1%}" if before["trials"] else "-"
        lines.append(
            f"| {'on' if routing else 'off'} | {m} | {n:,} | {mark(e)} | {e['width']:.3f} "
            f"| {mark(p)} | {p['width']:.3f} | {old} |"
        )
    lines.append("")
    if missed:
        lines.append(
            "Missed cells (coverage below the target): "
            + "; ".join(
                f"routing {'on' if r else 'off'}, {m} a problem, {n} labels, "
                f"{'experts only' if name == 'experts' else 'PPI'}"
                for r, m, n, name in missed
            )
            + "."
        )
    else:
        lines.append(f"Every cell reached {TARGET_COVERAGE:.0%}.")
    return "\n".join(lines) + "\n"


def write_first(text: str) -> None:
    """Puts the section before the earlier interval sections of RESULTS.md (today first)."""
    path = HERE / "RESULTS.md"
    body = path.read_text(encoding="utf-8")
    marker = "## Scores with honest intervals"
    at = body.find(marker)
    body = body + "\n" + text if at < 0 else body[:at] + text + "\n" + body[at:]
    path.write_text(body, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the section to RESULTS.md")
    parser.add_argument("--trials", type=int, help="campaigns per cell (default 1,000)")
    parser.add_argument("--quick", action="store_true", help="100 campaigns a cell")
    args = parser.parse_args()
    trials = args.trials or (100 if args.quick else 1000)
    started = time.perf_counter()
    results = []
    for routing, m, n in cells():
        out = measure(per_problem=m, labels=n, routing=routing, trials=trials, seed=33)
        results.append((routing, m, n, out))
        print(
            f"routing {'on ' if routing else 'off'} m={m:2d} n={n:5d}: experts "
            f"{out['experts']['coverage']:.3f} ({out['experts']['width']:.3f}), ppi "
            f"{out['ppi']['coverage']:.3f} ({out['ppi']['width']:.3f})",
            flush=True,
        )
    text = section(results, trials, time.perf_counter() - started)
    print(text)
    if args.write:
        write_first(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
