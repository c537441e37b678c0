"""The evaluator design space in one job, over real HTTP with the fake model server: every cell
(endpoint x context x instruction x k runs) graded, stored call by call and never asked twice,
failures kept with their raw reply and retried alone, cells over the budget not started, and a
report whose ranking, probes, alternative annotator test and ensemble curve follow from the
fake model's answers."""

from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.models import CampaignMember, Item
from graders.models import CellState, GraderGrid, GraderGridCall
from graders.services.evaluation_import import PredictionError
from graders.services.grids import grid_create, grid_retry, grid_run
from rubrics.models import LLMEndpoint
from tests.conftest import as_job
from tests.exports.factories import proof
from tests.factories import UserFactory
from tests.graders.grid_factories import grid_campaign, script_grader

pytestmark = pytest.mark.django_db

CONTEXTS = ["none", "reference", "scheme", "both"]
INSTRUCTIONS = ["flexible", "strict"]


@pytest.fixture
def researcher():
    return UserFactory(username="grid-res", roles=["researcher"])


@pytest.fixture
def endpoints(fake_llm):
    cheap = LLMEndpoint.objects.create(
        name="fake-gpt",
        base_url=fake_llm.base_url,
        model="gpt-fake",
        max_attempts=1,
        input_price_per_million=Decimal("0.10"),
        output_price_per_million=Decimal("0.40"),
    )
    dear = LLMEndpoint.objects.create(
        name="fake-dear",
        base_url=fake_llm.base_url,
        model="claude-dear",
        max_attempts=1,
        input_price_per_million=Decimal("1000"),
        output_price_per_million=Decimal("1000"),
    )
    return cheap, dear


def cell_of(report, context, instruction, endpoint="fake-gpt"):
    return next(
        c
        for c in report["cells"]
        if (c["context"], c["instruction"], c["endpoint"]) == (context, instruction, endpoint)
    )


def test_the_grid_ranks_the_cells_and_says_whether_the_best_may_stand_in(
    researcher, fake_llm, endpoints
):
    corpus = grid_campaign()
    script_grader(fake_llm, corpus, truncate="Proof 1.1:")
    grid = grid_create(
        user=researcher,
        campaign=corpus.campaign,
        name="design space",
        endpoints=list(endpoints),
        contexts=CONTEXTS,
        instructions=INSTRUCTIONS,
        runs=2,
        aggregation="mean",
        budget=Decimal("1.00"),
    )
    cells = list(grid.cells.order_by("id"))
    assert len(cells) == 16
    over = [c for c in cells if c.state == CellState.OVER_BUDGET]
    assert {c.endpoint.name for c in over} == {"fake-dear"} and len(over) == 8
    assert all(c.estimated_cost > 1 for c in over)
    assert grid.total == 8 * 12 * 2

    grid = as_job("grader_grid", grid.pk, lambda: grid_run(grid_id=grid.pk))
    assert grid.status == "succeeded"
    assert len(fake_llm.log) == 8 * 12 * 2  # nothing asked of the cells over the budget
    assert all(entry["model"] == "gpt-fake" for entry in fake_llm.log)
    failed = GraderGridCall.objects.get(cell__grid=grid, score__isnull=True)
    assert "token limit" in failed.reason and "<assessment>" in failed.raw_reply
    report = grid.report
    skipped = cell_of(report, "both", "strict", "fake-dear")
    assert (
        skipped["skipped"].startswith("not started: estimated $")
        and "budget of $1.00" in (skipped["skipped"])
    )
    best = cell_of(report, "both", "strict")
    assert best["failed_calls"] == 1 and best["prompt_tokens"] > 0 and best["cost"] > 0
    # ranking by MAE: strict with both contexts exact; no context, flexible, worst
    order = report["rankings"]["mae"]["order"]
    assert order[0] == best["id"] == report["best"]
    assert order[-1] == cell_of(report, "none", "flexible")["id"]
    assert best["metrics"]["mae"] == 0 and best["intervals"]["mae"] == [0.0, 0.0]
    lenient = cell_of(report, "none", "flexible")
    comparison = next(
        c for c in report["rankings"]["mae"]["comparisons"] if c["cell"] == lenient["id"]
    )
    assert comparison["significant"] and comparison["interval"][0] > 0
    pooled = next(
        c for c in report["rankings"]["pooled_mae"]["comparisons"] if c["cell"] == lenient["id"]
    )
    # four problems: the sign-flip test enumerates 16 flips; every problem favours the best
    assert pooled["permutation"]["exact"] and pooled["permutation"]["p_value"] == pytest.approx(
        2 / 16
    )
    # the incomplete proofs: over-credited by 2 under flexible grading, not under strict
    flexible = cell_of(report, "scheme", "flexible")["probes"]["incomplete"]
    assert flexible["n"] == 4 and flexible["effect"] == pytest.approx(2)
    assert flexible["interval"] == [2.0, 2.0]
    assert best["probes"]["incomplete"]["effect"] == 0
    # self-preference: the grader (gpt, openai) against the openai proofs
    own = cell_of(report, "scheme", "strict")["probes"]["self_preference"]
    assert own["family"] == "openai" and own["n"] == 4
    # +1 on its own family's proofs below 7 (two of four), 0 on the others
    assert own["effect"] == pytest.approx(0.5)
    assert report["position"]["none"].startswith("No pairwise grader runs")
    # the alternative annotator test: the exact cell passes, the lenient one does not
    assert report["verdict"]["passes"]
    assert (
        "may stand in for an expert on this campaign's kind of proofs" in report["verdict"]["text"]
    )
    assert lenient["alt_test"]["campaign"]["omega"] == 0
    assert set(best["alt_test"]["per_type"]) == {"Algebra", "Number theory"}
    # ensembles: the flexible cell with both contexts answers one point either side per run
    curve = cell_of(report, "both", "flexible")["ensemble"]
    assert [row["runs"] for row in curve] == [1, 2]
    assert curve[1]["mae"] < curve[0]["mae"]

    # resumable: a run again asks nothing; a retry asks the failed call only
    GraderGrid.objects.filter(pk=grid.pk).update(status="running")
    calls = len(fake_llm.log)
    grid_run(grid_id=grid.pk)
    assert len(fake_llm.log) == calls
    grid_retry(grid=GraderGrid.objects.get(pk=grid.pk))
    grid = grid_run(grid_id=grid.pk)
    assert len(fake_llm.log) == calls + 1
    assert not GraderGridCall.objects.filter(cell__grid=grid, score__isnull=True).exists()
    with pytest.raises(PredictionError, match="no failed call"):
        grid_retry(grid=grid)


def test_bad_choices_are_named(researcher, endpoints):
    corpus = grid_campaign("bad")
    with pytest.raises(PredictionError, match="contexts: choose at least one of none"):
        grid_create(
            user=researcher,
            campaign=corpus.campaign,
            name="x",
            endpoints=[endpoints[0]],
            contexts=["everything"],
            instructions=["strict"],
        )
    assert not GraderGrid.objects.exists()


def test_the_form_queues_a_grid_and_the_page_shows_the_report(
    client,
    researcher,
    fake_llm,
    endpoints,
    django_capture_on_commit_callbacks,
    django_assert_max_num_queries,
):
    corpus = grid_campaign("page")
    script_grader(fake_llm, corpus)
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            reverse("exports:grid_create"),
            {
                "campaign": corpus.campaign.slug,
                "name": "page grid",
                "endpoints": [endpoints[0].pk],
                "contexts": ["none", "both"],
                "instructions": ["strict"],
                "runs": 1,
                "aggregation": "mean",
                "budget": "",
            },
        )
    assert response.status_code == 302 and len(callbacks) == 1
    grid = GraderGrid.objects.get()
    pending = client.get(
        reverse("exports:grid", args=[grid.pk]), headers={"HX-Request": "true"}
    ).content.decode()
    assert 'hx-trigger="every 1s"' in pending and "0 of 24 calls" in pending
    grid_run(grid_id=grid.pk)
    with django_assert_max_num_queries(8):
        page = client.get(reverse("exports:grid", args=[grid.pk])).content.decode()
    assert "may stand in for an expert" in page
    assert 'id="ranking-mae"' in page and 'id="bias-probes"' in page and 'id="alt-test"' in page
    assert "No pairwise grader runs" in page
    bad = client.post(reverse("exports:grid_create"), {"campaign": corpus.campaign.slug})
    assert bad.status_code == 400 and "This field is required" in bad.content.decode()


def test_a_grid_whose_worker_stopped_is_queued_again_and_goes_on(
    researcher, fake_llm, endpoints, django_capture_on_commit_callbacks
):
    """A grid stopped mid-way (its heartbeat silent) is sent again by the sweep; the next run
    asks only for the calls not yet stored."""
    from datetime import timedelta

    from django.utils import timezone

    from jobs.services import jobs_sweep

    corpus = grid_campaign("swept")
    script_grader(fake_llm, corpus)
    grid = grid_create(
        user=researcher,
        campaign=corpus.campaign,
        name="swept",
        endpoints=[endpoints[0]],
        contexts=["both"],
        instructions=["strict"],
    )
    grid_run(grid_id=grid.pk)
    GraderGridCall.objects.filter(cell__grid=grid, item__in=corpus.items[:5]).delete()
    GraderGrid.objects.filter(pk=grid.pk).update(
        status="running", attempts=1, heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        sweep = jobs_sweep(queued=0)
    assert ("grader_grid", grid.pk) in sweep.requeued and len(callbacks) == 1
    assert GraderGrid.objects.get(pk=grid.pk).status == "pending"
    calls = len(fake_llm.log)
    grid = as_job("grader_grid", grid.pk, lambda: grid_run(grid_id=grid.pk))
    assert len(fake_llm.log) == calls + 5 and grid.status == "succeeded"


def test_an_expert_holding_a_proof_of_the_campaign_is_refused_the_study(client, endpoints):
    corpus = grid_campaign("held")
    grid = GraderGrid.objects.create(campaign=corpus.campaign, name="held")
    both = UserFactory(username="held-both", roles=["researcher", "expert"])
    CampaignMember.objects.create(campaign=corpus.campaign, user=both, role="expert")
    Item.objects.create(
        campaign=corpus.campaign,
        proof=proof(corpus.items[0].proof.problem, "gpt-4o", 9, "An ungraded proof."),
    )
    client.force_login(both)
    refused = client.get(reverse("exports:grid", args=[grid.pk]))
    assert refused.status_code == 403 and "grading" in refused.content.decode().lower()


def test_a_cell_whose_every_call_fails_is_reported_without_a_rank(researcher, fake_llm, endpoints):
    """The flexible instruction has no scripted reply (the fake answers 404): its cell keeps
    every failure with its reason, has no metric and no rank; the others are ranked."""
    corpus = grid_campaign("fails")
    script_grader(fake_llm, corpus)
    fake_llm.rules = [r for r in fake_llm.rules if "(flexible grading)" not in r.needles]
    grid = grid_create(
        user=researcher,
        campaign=corpus.campaign,
        name="half",
        endpoints=[endpoints[0]],
        contexts=["both"],
        instructions=["flexible", "strict"],
    )
    grid = grid_run(grid_id=grid.pk)
    assert grid.status == "succeeded"
    report = grid.report
    flexible = cell_of(report, "both", "flexible")
    assert flexible["failed_calls"] == 12 and flexible["proofs"] == 0
    assert all(v is None for v in flexible["metrics"].values())
    assert report["rankings"]["mae"]["order"] == [cell_of(report, "both", "strict")["id"]]
    reasons = set(
        GraderGridCall.objects.filter(cell_id=flexible["id"]).values_list("reason", flat=True)
    )
    assert len(reasons) == 1 and "404" in reasons.pop()
