"""A grader's pairwise and knockout selection measured against the experts' pairs of a pairwise
campaign, as ProofBench's best-of-n section measures selection strategies.

A grader's preference between two proofs comes from a `Prefer` function: from an evaluation's
scores (`prefer_by_scores`: the higher mean over runs wins, equal scores tie) or from a
grader's own pairwise picks (`prefer_from_picks`, e.g. a pairwise judge's choices). Against the
final human pairs it gives:
- agreement: on the pairs the experts decided (not a tie), the share where the grader prefers
  the same proof (a grader tie counts as half), with a Wilson 95% interval; and exact agreement
  over the three outcomes (a, b, tie) on every final pair;
- knockout: on each problem, a single-elimination tournament of its proofs (seeded bracket,
  byes for an odd count, a tie or a missing comparison decided by a seeded coin); is the
  winner the experts' Bradley-Terry best proof of the problem (annotation.bradley_terry over
  every final pair of the campaign)? Beside it the pointwise choice (the best-scored proof), and
  the experts' score of each selected proof.

The module is separate from the grader evaluation report (graders/services/), which it reads
nothing of but the predictions; its page is `pairwise_selection` below, which also starts a
pairwise grader run (graders/services/pick_runs.py) and compares its picks (`?picks_run=ID`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from django.contrib import messages
from django.db.models import Avg
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRefresh

from annotation.models import Campaign, TaskKind
from annotation.selectors.pairs import A_SHARE, pair_outcomes, pair_proofs, pair_ratings
from core.http import page_or_fragment, wants_fragment
from core.queries import of_ids
from core.roles import role_required
from core.visibility import ensure_not_blind
from graders.forms import PickRunForm
from graders.models import GraderEvaluation, GraderPrediction, PairwisePickRun
from graders.selectors import READERS, evaluations_for_user
from jobs.models import JobStatus

# prefer(x, y): x's share (1 x better, 0 y better, 0.5 tie), or None when the grader has no view
Prefer = Callable[[Hashable, Hashable], float | None]
Z95 = 1.959963984540054
PAGES = {
    "page": "graders/pairwise_selection.html",
    "fragment": "graders/_pick_run_status.html",
}


def prefer_by_scores(scores: dict[Hashable, float]) -> Prefer:
    def prefer(x, y):
        if x not in scores or y not in scores:
            return None
        return 1.0 if scores[x] > scores[y] else 0.0 if scores[x] < scores[y] else 0.5

    return prefer


def prefer_from_picks(picks: dict[tuple[Hashable, Hashable], float]) -> Prefer:
    """From a grader's own pairwise picks: `picks[(x, y)]` is x's share (either order looked up)."""

    def prefer(x, y):
        if (x, y) in picks:
            return picks[x, y]
        if (y, x) in picks:
            return 1.0 - picks[y, x]
        return None

    return prefer


def wilson(successes: float, n: int) -> tuple[float, float]:
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom
    return (centre - half, centre + half)


@dataclass(frozen=True)
class Agreement:
    decided: int  # human pairs with a winner that the grader compared
    agree: float  # grader preferred the same proof (a grader tie: half)
    rate: float
    low: float
    high: float
    exact: int  # every final pair the grader compared: same outcome of a, b, tie
    compared: int
    missing: int  # final pairs the grader has no view of


def pairwise_agreement(human: list[tuple[Hashable, Hashable, float]], prefer: Prefer) -> Agreement:
    decided = exact = compared = missing = 0
    agree = 0.0
    for x, y, share in human:
        g = prefer(x, y)
        if g is None:
            missing += 1
            continue
        compared += 1
        exact += int(g == share)
        if share != 0.5:
            decided += 1
            agree += 0.5 if g == 0.5 else float((g > 0.5) == (share > 0.5))
    low, high = wilson(agree, decided)
    rate = agree / decided if decided else math.nan
    return Agreement(decided, agree, rate, low, high, exact, compared, missing)


@dataclass(frozen=True)
class Knockout:
    winner: Hashable
    rounds: list[list[tuple[Hashable, Hashable, Hashable]]]  # per round: (x, y, winner)
    coin_flips: int


def knockout(entrants: list[Hashable], prefer: Prefer, *, seed: int | str = 0) -> Knockout:
    """A single-elimination tournament: the bracket shuffled by `seed`, a bye for the last of an
    odd round, a tie or a missing comparison decided by a coin of the same seed."""
    if not entrants:
        raise ValueError("a knockout needs at least one entrant")
    rng = random.Random(f"knockout:{seed}")
    field_ = list(entrants)
    rng.shuffle(field_)
    rounds: list[list[tuple]] = []
    flips = 0
    while len(field_) > 1:
        games, advanced = [], []
        for k in range(0, len(field_) - 1, 2):
            x, y = field_[k], field_[k + 1]
            share = prefer(x, y)
            if share is None or share == 0.5:
                flips += 1
                share = 1.0 if rng.random() < 0.5 else 0.0
            winner = x if share > 0.5 else y
            games.append((x, y, winner))
            advanced.append(winner)
        if len(field_) % 2:
            advanced.append(field_[-1])
        rounds.append(games)
        field_ = advanced
    return Knockout(field_[0], rounds, flips)


@dataclass
class ProblemSelection:
    problem: str
    proofs: int
    human_best: Hashable
    knockout_winner: Hashable
    pointwise_best: Hashable | None
    knockout_hit: bool
    pointwise_hit: bool | None
    knockout_score: float  # the experts' BT score of the knockout's winner
    coin_flips: int
    labels: dict = field(default_factory=dict)  # proof -> "problem / generator / sample key"

    @property
    def human_best_label(self) -> str:
        return self.labels.get(self.human_best, "")

    @property
    def knockout_label(self) -> str:
        return self.labels.get(self.knockout_winner, "")

    @property
    def pointwise_label(self) -> str:
        return self.labels.get(self.pointwise_best, "")


@dataclass
class SelectionReport:
    agreement: Agreement
    problems: list[ProblemSelection] = field(default_factory=list)

    @property
    def knockout_hits(self) -> int:
        return sum(p.knockout_hit for p in self.problems)

    @property
    def pointwise_hits(self) -> int:
        return sum(bool(p.pointwise_hit) for p in self.problems)


def selection_against_pairs(
    campaign: Campaign,
    prefer: Prefer,
    *,
    scores: dict[Hashable, float] | None = None,
    seed: int = 0,
) -> SelectionReport:
    """The grader (`prefer`, and `scores` for the pointwise choice) against the campaign's final
    human pairs: agreement, and per problem the knockout's winner against the BT best."""
    rows = pair_outcomes(campaign)
    human = [(r["proof_a_id"], r["proof_b_id"], A_SHARE[r["final_choice"]]) for r in rows]
    ratings = pair_ratings(campaign)
    report = SelectionReport(pairwise_agreement(human, prefer))
    by_problem: dict[int, list] = {}
    for s in ratings.proofs:  # best first
        by_problem.setdefault(ratings.proof_problem[s.key], []).append(s)
    names = {r["proof_a__problem_id"]: r["proof_a__problem__external_id"] for r in rows}
    for problem_id, ranked in sorted(by_problem.items(), key=lambda kv: names[kv[0]]):
        entrants = sorted(s.key for s in ranked)
        bracket = knockout(entrants, prefer, seed=f"{seed}:{problem_id}")
        score = {s.key: s.score for s in ranked}
        best = ranked[0].key
        pointwise = None
        if scores is not None and any(p in scores for p in entrants):
            pointwise = max((p for p in entrants if p in scores), key=lambda p: (scores[p], -p))
        report.problems.append(
            ProblemSelection(
                problem=names[problem_id],
                proofs=len(entrants),
                human_best=best,
                knockout_winner=bracket.winner,
                pointwise_best=pointwise,
                knockout_hit=bracket.winner == best,
                pointwise_hit=None if pointwise is None else pointwise == best,
                knockout_score=score[bracket.winner],
                coin_flips=bracket.coin_flips,
                labels={p: ratings.proof_labels[p] for p in entrants},
            )
        )
    return report


def evaluation_scores(evaluation: GraderEvaluation, proof_ids) -> dict[int, float]:
    """The evaluation's mean score over its runs of each of `proof_ids` it predicted."""
    return {
        row["item__proof_id"]: row["mean"]
        for row in of_ids(
            GraderPrediction.objects.filter(evaluation=evaluation), "item__proof", proof_ids
        )
        .values("item__proof_id")
        .annotate(mean=Avg("score"))
    }


PICK_KEYS = ("problem_id", "a_generator", "a_sample_key", "b_generator", "b_sample_key", "choice")
PICK_SHARE = {"a": 1.0, "b": 0.0, "tie": 0.5}
PICKS_MAX_BYTES = 20_000_000


class PicksError(ValueError):
    """A picks file that cannot be read; the message names the file, line and field."""


def picks_read(name: str, data: bytes) -> dict[tuple[int, int], float]:
    """A grader's pairwise picks from a JSON Lines or CSV file with the `pairs` export's key
    columns and `choice` (a, b or tie): the file a lab gets by running its pairwise judge over
    the export. Returns proof_a-id, proof_b-id -> proof_a's share."""
    from problems.models import Proof

    if len(data) > PICKS_MAX_BYTES:
        raise PicksError(f"{name}: larger than {PICKS_MAX_BYTES // 1_000_000} MB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PicksError(f"{name}, line {line}: not UTF-8") from exc
    rows: list[tuple[int, dict]] = []
    if name.lower().endswith(".csv"):
        import csv
        import io

        reader = csv.DictReader(io.StringIO(text))
        missing = [k for k in PICK_KEYS if k not in (reader.fieldnames or [])]
        if missing:
            raise PicksError(f"{name}, line 1: no column {', '.join(missing)}")
        rows = [(n, row) for n, row in enumerate(reader, start=2)]
    else:
        import json

        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PicksError(f"{name}, line {n}: not JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise PicksError(f"{name}, line {n}: not a JSON object")
            rows.append((n, row))
    if not rows:
        raise PicksError(f"{name}: no picks")
    keys = set()
    for n, row in rows:
        for field_name in PICK_KEYS:
            if not isinstance(row.get(field_name), str) or not row[field_name]:
                raise PicksError(f"{name}, line {n}, field {field_name}: missing or not text")
        if row["choice"] not in PICK_SHARE:
            raise PicksError(
                f"{name}, line {n}, field choice: {row['choice']!r} is not a, b or tie"
            )
        keys.add((row["problem_id"], row["a_generator"], row["a_sample_key"]))
        keys.add((row["problem_id"], row["b_generator"], row["b_sample_key"]))
    problems = {k[0] for k in keys}
    ids = {
        (p, g, k): pk
        for pk, p, g, k in Proof.objects.filter(problem__external_id__in=problems).values_list(
            "id", "problem__external_id", "generator", "sample_key"
        )
    }
    picks: dict[tuple[int, int], float] = {}
    for n, row in rows:
        pair = []
        for side in ("a", "b"):
            key = (row["problem_id"], row[f"{side}_generator"], row[f"{side}_sample_key"])
            if key not in ids:
                raise PicksError(
                    f"{name}, line {n}, field {side}_sample_key: no proof {' / '.join(key)}"
                )
            pair.append(ids[key])
        picks[pair[0], pair[1]] = PICK_SHARE[row["choice"]]
    return picks


def _selection_context(request, campaign: Campaign, proofs) -> dict:
    from graders.selectors import pick_runs_for_user

    evaluations = (
        evaluations_for_user(request.user).filter(predictions__item__proof__in=proofs).distinct()
    )
    return {
        "campaign": campaign,
        "evaluations": evaluations,
        "chosen": request.GET.get("evaluation", ""),
        "pick_runs": pick_runs_for_user(request.user).filter(campaign=campaign)[:20],
        "pick_form": PickRunForm(),
    }


def _campaign(request, slug):
    campaign = get_object_or_404(Campaign, slug=slug, task_kind=TaskKind.PAIRWISE)
    proofs = pair_proofs(campaign)
    ensure_not_blind(request.user, proofs, "this comparison", proof="pk")
    return campaign, proofs


@role_required(*READERS)
def pairwise_selection(request, slug):
    """The page: a grader evaluation's (GET `?evaluation=ID`), a pairwise grader run's (GET
    `?picks_run=ID`) or an uploaded picks file's (POST) pairwise and knockout selection against
    the campaign's human pairs (researchers and admins; refused, naming why, to one holding a
    pair blind); and the form that starts a pairwise grader run."""
    from graders.selectors import pick_run_failed_calls, pick_run_shares

    campaign, proofs = _campaign(request, slug)
    context = _selection_context(request, campaign, proofs)
    chosen, picks_run = context["chosen"], request.GET.get("picks_run", "")
    if request.method == "POST":
        upload = request.FILES.get("picks")
        if upload is None:
            context["error"] = "picks: choose a file (JSON Lines or CSV)."
            return render(request, "graders/pairwise_selection.html", context, status=400)
        try:
            picks = picks_read(upload.name, upload.read())
        except PicksError as exc:
            context["error"] = str(exc)
            return render(request, "graders/pairwise_selection.html", context, status=400)
        context["picks_name"] = upload.name
        context["report"] = selection_against_pairs(campaign, prefer_from_picks(picks))
    elif picks_run.isdigit():
        run = get_object_or_404(PairwisePickRun, pk=int(picks_run), campaign=campaign)
        context["picks_run"] = run
        if wants_fragment(request):  # the status polled while the run works
            if run.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
                return HttpResponseClientRefresh()
            return page_or_fragment(request, **PAGES, context=context, as_fragment=True)
        context["picks_name"] = run.name
        context["position"] = run.report.get("position")
        context["pick_failures"] = pick_run_failed_calls(run)
        if run.records.exclude(pick="").exists():
            context["report"] = selection_against_pairs(
                campaign, prefer_from_picks(pick_run_shares(run))
            )
    elif chosen.isdigit():
        evaluation = get_object_or_404(context["evaluations"], pk=int(chosen))
        scores = evaluation_scores(evaluation, proofs.values("id"))
        context["evaluation"] = evaluation
        context["report"] = selection_against_pairs(
            campaign, prefer_by_scores(scores), scores=scores
        )
    return page_or_fragment(request, **PAGES, context=context, as_fragment=False)


@role_required(*READERS)
@require_http_methods(["POST"])
def pick_run_start(request, slug):
    """Starts a pairwise grader run of the chosen endpoint over the campaign's pairs (both
    orders): a pairwise campaign's pairs, back to its selection page on that run; or any other
    campaign's labelled proofs paired per problem, back to `next` (the grader report that asked)."""
    from graders.selectors import pick_campaign_for_user
    from graders.services.evaluation_import import PredictionError
    from graders.services.pick_runs import pick_run_create

    campaign = pick_campaign_for_user(request.user, slug)
    pairwise = campaign.task_kind == TaskKind.PAIRWISE
    back = _back(request)
    form = PickRunForm(request.POST)
    if form.is_valid():
        try:
            run = pick_run_create(
                user=request.user,
                campaign=campaign,
                endpoint=form.cleaned_data["endpoint"],
                name=form.cleaned_data["name"],
            )
        except PredictionError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"The pairwise run asks {run.total} calls; it is queued.")
            if not pairwise:
                return redirect(back)
            url = reverse("exports:pairwise-selection", args=[campaign.slug])
            return redirect(f"{url}?picks_run={run.pk}")
    if not pairwise:
        messages.error(request, f"Not started: {form.errors.as_text()}")
        return redirect(back)
    context = _selection_context(request, campaign, pair_proofs(campaign)) | {"pick_form": form}
    return render(request, "graders/pairwise_selection.html", context, status=400)


@role_required(*READERS)
@require_http_methods(["POST"])
def pick_run_retry(request, slug, run_id: int):
    """Queues a finished pairwise grader run again for its failed calls only; back to its
    selection page (a pairwise campaign) or to `next` (the grader report that showed it)."""
    from graders.selectors import pick_campaign_for_user
    from graders.services.evaluation_import import PredictionError
    from graders.services.pick_runs import pick_run_retry as pick_run_retry_service

    campaign = pick_campaign_for_user(request.user, slug)
    run = get_object_or_404(PairwisePickRun, pk=run_id, campaign=campaign)
    try:
        pick_run_retry_service(run=run)
    except PredictionError as exc:
        messages.error(request, f"Not retried: {exc}.")
    else:
        messages.success(request, "The failed calls are queued again.")
    if campaign.task_kind != TaskKind.PAIRWISE:
        return redirect(_back(request))
    url = reverse("exports:pairwise-selection", args=[campaign.slug])
    return redirect(f"{url}?picks_run={run.pk}")


def _back(request) -> str:
    """Where a pick run's form goes back to outside a pairwise campaign: the `next` it gave
    (the grader report that showed the form) when it is this site's, else the evaluations."""
    from django.utils.http import url_has_allowed_host_and_scheme

    back = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(back, {request.get_host()}, request.is_secure()):
        return back
    return reverse("exports:evaluations")
