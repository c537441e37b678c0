#!/usr/bin/env python3
"""Routing expert effort by uncertainty, measured: how many human grades a campaign needs to
reach a target label accuracy when experts grade the most uncertain proofs first (the formula of
estimation/routing/uncertainty.py) versus in random order.

Every proof gets a label: the experts' grade when an expert graded it, the automatic label
otherwise. Label accuracy = share of labels equal to the true label. Experts are taken to be
right (the measure is of routing, not of experts).

Data with known true scores:
1. Our own generated corpus (seeded, written here): proofs with a true label on 0 / 0.5 / 1 and a
   hidden difficulty; n = 4 verifier runs with a known bias and a noise that grows with the
   difficulty; m = 2 meta-verifications of each analysis reporting an issue (they reject a wrong
   analysis with probability 0.75, confirm a right one with probability 0.85); two graders on 0-7
   with known biases (+0.8, -0.5) and noises (1.0, 1.5), also growing with the difficulty. The
   automatic label is the verifier scores' mean, put on the nearest of 0 / 0.5 / 1. Two settings:
   difficulty varying from proof to proof (Beta(2, 5): most proofs easy, a few hard), and the same
   difficulty for every proof (the noise is then the same everywhere: the case where routing
   should help least). A third setting adds a verifier error shared by a proof's four samples
   (normal, sd 0.3, on 0-1, over the varying difficulty): averaging samples no longer removes
   it, the samples agree and are wrong together, and their spread says nothing.
   Each setting is also routed with the rater model (`adjudication.estimators.dawid_skene`, as
   the platform fits it per campaign): fitted without gold over three raters per proof (the
   verifier, its samples' mean read as 0 / 0.5 / 1; each grader, its 0-7 prediction / 7 read the
   same way; the three as one voice, weight 1/3 each, as the platform fits them), its doubt
   about the automatic label (1 - P(the verifier's class)) joins the
   uncertainty as the `model_doubt` component (estimation/routing/uncertainty.py). A staged variant
   fits it again once experts graded the first 10% (those labels as gold) and ranks the rest.
2. The real ratings in ../shared/fixtures/real/deepseek_math_v2/ (read at run time): DeepSeekMath-
   V2's outputs carry, per proof, the mean automatic rating (0-1) and the human rating (0-7, or
   0-10 / 0-21 for Putnam / CMO, normalised to 0-7, then 7 -> 1, 5-6 -> 0.5, 0-4 -> 0). Only the
   mean is stored; the platform reads it as the `rating` component (the largest spread that
   mean allows, as pass/fail samples), and so does this benchmark. Six proofs: an illustration,
   not a measurement; no rater model (one rater).

Usage: python benchmarks/bench_routing.py [--write] (--write appends the section to RESULTS.md;
the plot benchmarks/routing_curves.svg is written on every run). Needs no database.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import sys
import time
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from adjudication.estimators import dawid_skene  # noqa: E402
from annotation.scales import nearest, to_ternary  # noqa: E402
from estimation.routing.uncertainty import proof_uncertainty  # noqa: E402

TERNARY = [Decimal("0"), Decimal("0.5"), Decimal("1")]
TARGETS = (0.90, 0.95, 0.98, 0.99)
RANDOM_ORDERS = 50
SVG = HERE / "routing_curves.svg"
REAL = Path(os.environ.get("PROOFMARK_REAL_FIXTURES", HERE.parent.parent / "shared/fixtures/real"))


def ternary(value: float) -> float:
    """The nearest of 0 / 0.5 / 1 (halfway: the lower), as the platform reads labels."""
    clipped = min(1.0, max(0.0, value))
    return float(nearest(Decimal(str(round(clipped, 6))), TERNARY))


# --- the generated corpus -----------------------------------------------------------------------


def generated_corpus(*, size: int, seed: int, varying: bool, shared_sd: float = 0.0) -> list[dict]:
    rng = random.Random(seed)
    proofs = []
    for _ in range(size):
        truth = rng.choices([0.0, 0.5, 1.0], weights=[0.45, 0.15, 0.40])[0]
        difficulty = rng.betavariate(2, 5) if varying else 2 / 7
        noise = 0.3 + 2.0 * difficulty
        shared = rng.gauss(0, shared_sd) if shared_sd else 0.0
        scores = [ternary(truth + 0.1 + shared + rng.gauss(0, 0.3 * noise)) for _ in range(4)]
        metas = []
        for score in scores:
            if score >= 1:
                continue
            right = score == truth
            if right:
                metas.append([1.0 if rng.random() < 0.85 else 0.0 for _ in range(2)])
            else:
                metas.append([0.0 if rng.random() < 0.75 else 1.0 for _ in range(2)])
        if truth == 1.0:
            on_seven = 7
        elif truth == 0.5:
            on_seven = rng.choice([5, 6])
        else:
            on_seven = rng.randint(0, 4)
        predictions = [
            min(7.0, max(0.0, round(on_seven + bias + rng.gauss(0, sd * (0.5 + 2 * difficulty)))))
            / 7
            for bias, sd in ((0.8, 1.0), (-0.5, 1.5))
        ]
        proofs.append(
            {
                "truth": truth,
                "auto": ternary(sum(scores) / len(scores)),
                "evidence": {
                    "verifier_scores": scores,
                    "meta_scores": metas,
                    "predictions": predictions,
                },
                "raters": [ternary(sum(scores) / len(scores)), *map(ternary, predictions)],
            }
        )
    return with_uncertainty(proofs)


CLASSES = [0.0, 0.5, 1.0]


def with_uncertainty(proofs: list[dict]) -> list[dict]:
    """Each proof's uncertainty without the rater model, and with it fitted over the corpus
    without gold (the raters' labels are all a campaign knows before experts grade)."""
    for proof in proofs:
        proof["uncertainty"] = proof_uncertainty(**proof["evidence"]).value
    for proof, (value, doubt) in zip(proofs, model_uncertainty(proofs, {}), strict=True):
        proof["with_model"], proof["model_only"] = value, doubt
    return proofs


def model_uncertainty(proofs: list[dict], gold: dict[int, int]) -> list[tuple[float, float]]:
    """(uncertainty with the model's doubt, the doubt alone) per proof, the model fitted with
    `gold` (proof index -> class) as known values."""
    tasks, workers, labels = [], [], []
    for t, proof in enumerate(proofs):
        for w, value in enumerate(proof["raters"]):
            tasks.append(t)
            workers.append(w)
            labels.append(CLASSES.index(value))
    model = dawid_skene(
        tasks=tasks,
        workers=workers,
        labels=labels,
        n_tasks=len(proofs),
        n_workers=len(proofs[0]["raters"]),
        n_classes=3,
        gold=gold,
        # the automatic raters of a proof as one voice, as the platform fits them
        weights=[1 / len(proofs[0]["raters"])] * len(tasks),
    )
    out = []
    for t, proof in enumerate(proofs):
        found = proof_uncertainty(
            **proof["evidence"],
            posterior=model.posteriors[t].tolist(),
            label_class=CLASSES.index(proof["auto"]),
        )
        out.append((found.value, found.model_doubt))
    return out


FIRST_SHARE = 0.1


def staged_order(proofs: list[dict]) -> list[int]:
    """As the platform is meant to be used: experts grade the first tenth in the order with the
    model; the model is fitted again with their labels as gold (the agreement page's button,
    or the fit after labelling), and the rest is ranked again by its uncertainty."""
    first = uncertainty_order(proofs, "with_model")[: round(FIRST_SHARE * len(proofs))]
    gold = {t: CLASSES.index(proofs[t]["truth"]) for t in first}
    refit = model_uncertainty(proofs, gold)
    taken = set(first)
    rest = sorted(
        (t for t in range(len(proofs)) if t not in taken), key=lambda t: (-refit[t][0], t)
    )
    return first + rest


# --- the real ratings ---------------------------------------------------------------------------

NATIVE_MAX = {"Putnam": 10, "CMO": 21}


def real_corpus() -> list[dict]:
    folder = REAL / "deepseek_math_v2"
    proofs = []
    for path in sorted(folder.glob("*_outputs_sample.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            prediction = record["model_prediction"]
            name = record["problem_idx"]
            native_max = next((m for k, m in NATIVE_MAX.items() if name.startswith(k)), 7)
            on_seven = Decimal(prediction["human_rating"]) * 7 / native_max
            truth = float(to_ternary(nearest(on_seven, [Decimal(v) for v in range(8)])))
            mean = float(prediction["average_automatic_rating"])
            proofs.append(
                {
                    "name": name,
                    "human": f"{prediction['human_rating']}/{native_max}",
                    "mean": mean,
                    "truth": truth,
                    "auto": ternary(mean),
                    # as the platform reads an imported mean rating (the `rating` component)
                    "uncertainty": proof_uncertainty(verifier_scores=[], ratings=[mean]).value,
                }
            )
    return proofs


# --- curves -------------------------------------------------------------------------------------


def accuracy_curve(proofs: list[dict], order: list[int]) -> list[float]:
    """Label accuracy after k human grades, k = 0..N, grading in `order`."""
    size = len(proofs)
    correct = sum(p["auto"] == p["truth"] for p in proofs)
    curve = [correct / size]
    for index in order:
        if proofs[index]["auto"] != proofs[index]["truth"]:
            correct += 1
        curve.append(correct / size)
    return curve


def needed(curve: list[float], target: float) -> int:
    return next(k for k, accuracy in enumerate(curve) if accuracy >= target - 1e-12)


def uncertainty_order(proofs: list[dict], key: str = "uncertainty") -> list[int]:
    return sorted(range(len(proofs)), key=lambda i: (-proofs[i][key], i))


def measure(proofs: list[dict], *, seed: int) -> dict:
    size = len(proofs)
    routed = accuracy_curve(proofs, uncertainty_order(proofs))
    modelled = "with_model" in proofs[0]
    model = accuracy_curve(proofs, uncertainty_order(proofs, "with_model")) if modelled else None
    alone = accuracy_curve(proofs, staged_order(proofs)) if modelled else None
    rng = random.Random(seed)
    randoms = []
    for _ in range(RANDOM_ORDERS):
        order = list(range(size))
        rng.shuffle(order)
        randoms.append(accuracy_curve(proofs, order))
    random_mean = [sum(c[k] for c in randoms) / RANDOM_ORDERS for k in range(size + 1)]
    wrong_first = sorted(range(size), key=lambda i: (proofs[i]["auto"] == proofs[i]["truth"], i))
    oracle = accuracy_curve(proofs, wrong_first)
    targets = {}
    for target in TARGETS:
        if routed[0] >= target:
            targets[target] = (0, 0.0, 0, 0 if modelled else None, 0 if modelled else None)
            continue
        random_needs = [needed(c, target) for c in randoms]
        targets[target] = (
            needed(routed, target),
            sum(random_needs) / len(random_needs),
            needed(oracle, target),
            needed(model, target) if modelled else None,
            needed(alone, target) if modelled else None,
        )
    return {
        "size": size,
        "automatic_accuracy": routed[0],
        "routed": routed,
        "model": model,
        "alone": alone,
        "random": random_mean,
        "oracle": oracle,
        "targets": targets,
    }


def at_fraction(curve: list[float], fraction: float) -> float:
    return curve[round(fraction * (len(curve) - 1))]


# --- plot ---------------------------------------------------------------------------------------

COLOURS = {
    "routed": "#2d5bd1",
    "model": "#7b2cbf",
    "alone": "#c2185b",
    "random": "#a86200",
    "oracle": "#1f7a4d",
}
LABELS = {
    "routed": "Most uncertain first",
    "model": "… with the rater model",
    "alone": "… refitted with the first 10% as gold",
    "random": "Random order (mean of 50)",
    "oracle": "Oracle: wrong labels first",
}


def svg_plot(panels: list[tuple[str, dict]]) -> str:
    """One panel per corpus: label accuracy against the human-graded fraction."""
    width, height, left, top, plot_w, plot_h = 330, 270, 48, 34, 260, 180
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * len(panels)}" '
        f'height="{height + 10}" viewBox="0 0 {width * len(panels)} {height + 10}" '
        'font-family="sans-serif" font-size="11" role="img" '
        'aria-label="Label accuracy against the share of proofs graded by experts">',
        f'<rect width="{width * len(panels)}" height="{height + 10}" fill="#fff"/>',
    ]
    for p, (title, result) in enumerate(panels):
        x0 = p * width + left
        low = math.floor(min(result["automatic_accuracy"], 0.999) * 10) / 10
        low = 0.0 if low < 0.5 else low
        tick_format = ".1%" if 1 - low <= 0.2 else ".0%"
        parts.append(f'<text x="{x0}" y="18" font-weight="bold">{title}</text>')

        def xy(fraction: float, accuracy: float, x0=x0, low=low) -> str:
            x = x0 + fraction * plot_w
            y = top + plot_h - (accuracy - low) / (1 - low) * plot_h
            return f"{x:.1f},{y:.1f}"

        for tick in range(0, 11, 2):
            fraction = tick / 10
            x = x0 + fraction * plot_w
            parts.append(
                f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="#eee"/>'
                f'<text x="{x:.1f}" y="{top + plot_h + 14}" text-anchor="middle">'
                f"{tick * 10}%</text>"
            )
        steps = 4
        for tick in range(steps + 1):
            accuracy = low + (1 - low) * tick / steps
            y = top + plot_h - tick / steps * plot_h
            parts.append(
                f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + plot_w}" y2="{y:.1f}" stroke="#eee"/>'
                f'<text x="{x0 - 4}" y="{y + 4:.1f}" text-anchor="end">{accuracy:{tick_format}}</text>'
            )
        parts.append(
            f'<rect x="{x0}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
            'stroke="#888"/>'
            f'<text x="{x0 + plot_w / 2}" y="{top + plot_h + 30}" text-anchor="middle">'
            "share of proofs graded by experts</text>"
        )
        for name in ("oracle", "random", "routed", "model", "alone"):
            curve = result[name]
            if curve is None:
                continue
            n = len(curve) - 1
            stride = max(1, n // 200)
            points = " ".join(xy(k / n, curve[k]) for k in [*range(0, n, stride), n])
            dash = ' stroke-dasharray="4 3"' if name == "oracle" else ""
            parts.append(
                f'<polyline points="{points}" fill="none" stroke="{COLOURS[name]}" '
                f'stroke-width="2"{dash}/>'
            )
    for i, name in enumerate(("routed", "model", "alone", "random", "oracle")):
        x = 10 + i * 150
        parts.append(
            f'<line x1="{x}" y1="{height - 8}" x2="{x + 24}" y2="{height - 8}" '
            f'stroke="{COLOURS[name]}" stroke-width="2"/>'
            f'<text x="{x + 30}" y="{height - 4}">{LABELS[name]}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# --- report -------------------------------------------------------------------------------------


def section(results: list[tuple[str, dict]], real: list[dict], seconds: float) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## Routing expert effort by uncertainty (`bench_routing.py`, {now})",
        "",
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}; the whole run took {seconds:.1f} s (no database). "
        "Experts are taken to be right; a proof no expert graded keeps its automatic label. "
        "Random order: the mean over 50 seeded shuffles. Oracle: the proofs whose automatic "
        "label is wrong first (the least human effort possible). Plot: "
        f"[`{SVG.name}`]({SVG.name}).",
        "",
        f"![Label accuracy against the share of proofs graded by experts]({SVG.name})",
        "",
        "Assumptions (the docstring of `bench_routing.py` has them whole): true labels 0 / 0.5 / 1 "
        "(45 / 15 / 40%); four verifier samples per proof, each the truth + 0.1 bias + noise "
        "growing with a hidden difficulty (Beta(2, 5), or fixed), read as 0 / 0.5 / 1; two "
        "meta-verifications of each analysis reporting an issue; two graders on 0-7 with biases "
        "+0.8 / -0.5 and noises 1.0 / 1.5; the automatic label is the samples' mean on 0 / 0.5 / "
        "1; experts are right. The correlated setting adds to every sample of a proof the same "
        "error (normal, sd 0.3). The rater model: Dawid-Skene over the verifier and the two "
        "graders, no gold (then, staged, the first 10% graded as gold).",
        "",
        "Human grades needed to reach a target label accuracy (share of the corpus):",
        "",
        "| corpus | proofs | automatic only | target | most uncertain first | with the rater "
        "model | … refitted with the first 10% as gold | random order | oracle |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for title, result in results:
        size = result["size"]
        for target, (routed, random_mean, oracle, model, alone) in result["targets"].items():
            with_model = "–" if model is None else f"{model} ({model / size:.1%})"
            with_model += " | " + ("–" if alone is None else f"{alone} ({alone / size:.1%})")
            lines.append(
                f"| {title} | {size} | {result['automatic_accuracy']:.1%} | {target:.0%} "
                f"| {routed} ({routed / size:.1%}) | {with_model} "
                f"| {random_mean:.0f} ({random_mean / size:.1%}) | {oracle} ({oracle / size:.1%}) |"
            )
    lines += [
        "",
        "Label accuracy after experts grade a share of the proofs:",
        "",
        "| corpus | order | 0% | 10% | 20% | 30% | 50% | 70% | 100% |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for title, result in results:
        for name in ("routed", "model", "alone", "random"):
            if result[name] is None:
                continue
            cells = " | ".join(
                f"{at_fraction(result[name], f):.1%}" for f in (0, 0.1, 0.2, 0.3, 0.5, 0.7, 1)
            )
            lines.append(f"| {title} | {LABELS[name].lower()} | {cells} |")
    lines += [
        "",
        "The real ratings (DeepSeekMath-V2 outputs in `../shared/fixtures/real/`), most uncertain "
        "first:",
        "",
        "| rank | problem | mean automatic rating | uncertainty | automatic label | human rating "
        "| true label |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rank, i in enumerate(uncertainty_order(real), start=1):
        p = real[i]
        lines.append(
            f"| {rank} | {p['name']} | {p['mean']:.3f} | {p['uncertainty']:.3f} | "
            f"{p['auto']:g} | {p['human']} | {p['truth']:g} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="append the section to RESULTS.md")
    parser.add_argument("--size", type=int, default=4000, help="proofs per generated corpus")
    parser.add_argument("--quick", dest="size", action="store_const", const=800, help="--size 800")
    args = parser.parse_args()
    started = time.perf_counter()
    results = [
        (
            "generated, varying difficulty",
            measure(generated_corpus(size=args.size, seed=17, varying=True), seed=1),
        ),
        (
            "generated, uniform difficulty",
            measure(generated_corpus(size=args.size, seed=17, varying=False), seed=1),
        ),
        (
            "generated, verifier error shared by a proof's samples (sd 0.3)",
            measure(generated_corpus(size=args.size, seed=17, varying=True, shared_sd=0.3), seed=1),
        ),
    ]
    real = real_corpus()  # empty in a clone without ../shared: the generated corpora only
    if real:
        results.append(("real (DeepSeekMath-V2, 6 proofs)", measure(real, seed=1)))
    SVG.write_text(svg_plot(results), encoding="utf-8")
    text = section(results, real, time.perf_counter() - started)
    print(text)
    if args.write:
        with (HERE / "RESULTS.md").open("a", encoding="utf-8") as handle:
            handle.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
