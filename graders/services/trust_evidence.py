"""The evidence that a grader can be trusted, read from a campaign for one grader's predictions:
the bias probes' inputs (proof length, model families, the proofs experts marked incomplete), the
experts' own scores for the alternative annotator test (per campaign and per problem type), the
pairwise picks for the position probe, and the report's plain verdict. Used by the design-space
report (each cell) and by a single evaluation's report alike; the statistics are
graders/trust.py's."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from annotation.models import Grade, GradeStatus
from graders import trust
from graders.selectors import pick_run_latest, pick_run_picks
from problems.models import Topic

# Error categories by which an expert marks a proof incomplete (the campaign's error taxonomy;
# a campaign's own category whose key names an omission counts too).
INCOMPLETE_CATEGORIES = ("skipped_steps", "missing_cases", "proposal_without_verification")
INCOMPLETE_WORDS = ("incomplete", "missing", "skipped", "omitted", "outline")


def incomplete_category(key: str) -> bool:
    return key in INCOMPLETE_CATEGORIES or any(word in key for word in INCOMPLETE_WORDS)


def pairwise_grader_picks(campaign, *, endpoint=None) -> list[trust.PairwisePick]:
    """A grader's pairwise picks of this campaign's proofs, asked in both orders: those of the
    campaign's latest finished pairwise grader run (graders/services/pick_runs.py), `endpoint`'s
    when it has one; [] when there is none."""
    run = pick_run_latest(campaign, endpoint=endpoint)
    return pick_run_picks(run) if run is not None else []


def position_evidence(campaign, *, endpoint=None) -> dict:
    """The position probe of the campaign's latest pairwise grader run (`endpoint`'s when it has
    one), naming the run it measures."""
    run = pick_run_latest(campaign, endpoint=endpoint)
    probe = trust.position_probe(pick_run_picks(run) if run is not None else [])
    if run is not None:
        probe |= {"run": run.name, "run_id": run.pk, "endpoint": run.endpoint.name}
    return probe


def incomplete_items(item_ids: list[int]) -> set[int]:
    """Items an expert marked incomplete: a submitted grade with an error span of an
    incompleteness category."""
    spans = Grade.objects.filter(item_id__in=item_ids, status=GradeStatus.SUBMITTED).values_list(
        "item_id", "spans__category"
    )
    return {item for item, category in spans if category and incomplete_category(category)}


def expert_grades(item_ids: list[int], to_comparison: Callable) -> dict[str, dict]:
    """Each expert's submitted scores on the comparison scale, named expert A, B, ... by the
    order of their first grade (the report names no account)."""
    grades = (
        Grade.objects.filter(
            item_id__in=item_ids, status=GradeStatus.SUBMITTED, score__isnull=False
        )
        .order_by("expert_id", "item_id")
        .values_list("expert_id", "item_id", "score")
    )
    by_expert: dict[int, dict[int, float]] = defaultdict(dict)
    for expert_id, item_id, score in grades:
        by_expert[expert_id][item_id] = to_comparison(score)
    names = {}
    for n, expert_id in enumerate(sorted(by_expert)):
        names[expert_id] = f"expert {chr(ord('A') + n)}" if n < 26 else f"expert {n + 1}"
    return {names[e]: scores for e, scores in by_expert.items()}


def alt_tests(predicted: list[Predicted], humans: dict) -> dict:
    """The alternative annotator test on the whole campaign and per problem type (topic)."""
    grader = {p.item_id: p.predicted for p in predicted}
    result = {"campaign": trust.alt_test(humans, grader)}
    topics = {p.item_id: p.topic for p in predicted}
    per_type = {}
    for topic in sorted({t for t in topics.values()}):
        keep = {i for i, t in topics.items() if t == topic}
        subset = {j: {i: v for i, v in h.items() if i in keep} for j, h in humans.items()}
        test = trust.alt_test(subset, {i: v for i, v in grader.items() if i in keep})
        if test["tested"]:
            per_type[Topic(topic).label] = test
    result["per_type"] = per_type
    return result


def verdict(cell: dict | None) -> dict:
    """The plain sentence a report leads with, for a grader (`label`, `alt_test`, `id`): the
    best cell of a design-space study, or the grader of an evaluation."""
    if cell is None:
        return {"passes": False, "text": "No cell has a score yet: nothing to judge."}
    test = cell["alt_test"]["campaign"]
    if not test["tested"]:
        return {
            "passes": False,
            "cell": cell["id"],
            "text": (
                f"{cell['label']}: the alternative annotator test needs items scored by two "
                "experts or more; this campaign has none the grader scored, so it cannot say "
                "whether the grader may stand in for an expert."
            ),
        }
    omega = test["omega"]
    won = sum(1 for e in test["experts"] if e.get("rejected"))
    evidence = (
        f"it beat {won} of {test['tested']} experts (winning rate ω = {omega:.2f}, ε = "
        f"{test['epsilon']}, Benjamini-Yekutieli at q = {test['q']}; average advantage "
        f"probability ρ = {test['rho']:.2f})"
    )
    if test["passes"]:
        text = (
            f"{cell['label']}: the grader may stand in for an expert on this campaign's kind of "
            f"proofs: {evidence}."
        )
    else:
        text = (
            f"{cell['label']}: the grader may not stand in for an expert on this campaign's kind "
            f"of proofs: {evidence}; ω must be at least 0.5."
        )
    if any(e.get("few") for e in test["experts"] if e["tested"]):
        text += f" Few double-scored items (under {trust.FEW_ITEMS} an expert): the test has little power."
    return {"passes": test["passes"], "cell": cell["id"], "text": text}


@dataclass(frozen=True)
class Predicted:
    """One labelled proof with a grader's prediction (both on the comparison scale)."""

    item_id: int
    problem: str
    topic: str
    expert: float
    predicted: float
    length: int
    generator: str


def grader_evidence(
    campaign,
    predicted: list[Predicted],
    grader_family: str,
    humans: dict,
    incomplete: set[int],
    *,
    endpoint=None,
) -> dict:
    """The bias probes, the alternative annotator test and the position probe of one grader."""
    records = [
        trust.ProbeRecord(
            problem=p.problem,
            expert=p.expert,
            predicted=p.predicted,
            length=p.length,
            generator_family=trust.model_family(p.generator),
            incomplete=p.item_id in incomplete,
        )
        for p in predicted
    ]
    return {
        "probes": trust.bias_probes(records, grader_family),
        "alt_test": alt_tests(predicted, humans),
        "position": position_evidence(campaign, endpoint=endpoint),
    }
