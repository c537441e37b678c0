"""Verifier runs and the automated labelling loop through the services, against the fake
OpenAI-compatible server (jobs run in-process here; test_worker.py crosses the real broker)."""

from decimal import Decimal

import pytest

from adjudication.models import FinalLabel, LabellingOutcome, MetaVerification
from adjudication.verification import labelling, verifier_runs
from annotation.models import Item
from problems.models import VerifierAnalysis
from tests.annotation.factories import CampaignFactory
from tests.conftest import as_job
from tests.factories import UserFactory
from tests.llm.fake_openai import status, text, unclosed_think
from tests.metaverify import replies
from tests.problems.page_factories import ProofFactory, VerifierAnalysisFactory
from tests.rubrics.generation_factories import LLMEndpointFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return UserFactory(roles=["admin"])


@pytest.fixture
def endpoints(fake_llm, settings):
    settings.LLM_BACKOFF_SECONDS = 0
    verifier = LLMEndpointFactory(base_url=fake_llm.base_url, model="verifier-x", api_key_env="")
    meta = LLMEndpointFactory(base_url=fake_llm.base_url, model="meta-x", api_key_env="")
    return verifier, meta


def proof(label: str):
    return ProofFactory(text=f"Proof {label}: by induction on $n$ the claim holds.")


def run_loop(run):
    for outcome in run.outcomes.order_by("id"):
        as_job(
            "labelling",
            outcome.pk,
            lambda pk=outcome.pk: labelling.labelling_outcome_execute(outcome_id=pk),
        )
    run.refresh_from_db()
    return {o.proof_id: o for o in run.outcomes.all()}


def test_verifier_run_stores_scores_contract_and_tokens(fake_llm, endpoints, admin):
    verifier, _ = endpoints
    good, bad = proof("good"), proof("bad")
    replies.script_proof(fake_llm, good, replies.CLEAN, replies.GAP)
    fake_llm.on(bad.text, text(replies.BROKEN), status(400))
    run = verifier_runs.verifier_run_start(
        kind="verify", endpoint=verifier, targets=[good, bad], samples=2, user=admin
    )
    run = as_job("verifier_run", run.pk, lambda: verifier_runs.verifier_run_execute(run_id=run.pk))
    # a reply without a score is a failed sample, like a refused call
    assert (run.status, run.total, run.done_count, run.failed_count) == ("failed", 4, 2, 2)
    failures = " | ".join(run.failures)  # in whichever order the two calls came back
    assert "no final phrase" in failures and "HTTP 400" in failures
    assert run.prompt_tokens > 0
    stored = {(a.proof_id, a.score, a.kept_contract) for a in VerifierAnalysis.objects.all()}
    assert stored == {
        (good.pk, Decimal("1"), True),
        (good.pk, Decimal("0.5"), True),
        (bad.pk, None, False),
    }
    broken = VerifierAnalysis.objects.get(proof=bad)
    assert (
        broken.score_problem == 'the text has no final phrase "the final overall score should be:"'
    )
    assert broken.metadata["prompt"] == "verifier@v1"
    calls = len(fake_llm.log)
    fake_llm.on(bad.text, text(replies.FATAL))
    fake_llm.rules.pop(1)
    run = verifier_runs.verifier_run_retry(run=run)
    run = as_job("verifier_run", run.pk, lambda: verifier_runs.verifier_run_execute(run_id=run.pk))
    assert run.status == "succeeded" and run.done_count == 4
    assert len(fake_llm.log) == calls + 2  # only the two failed samples were asked for again
    assert VerifierAnalysis.objects.filter(proof=bad, score=None).count() == 1  # raw reply kept


def test_meta_verifier_run_rates_analyses(fake_llm, endpoints, admin):
    verifier, meta = endpoints
    target = proof("meta")
    replies.script_proof(fake_llm, target, replies.GAP)
    verifier_runs.verifier_run_execute(
        run_id=verifier_runs.verifier_run_start(
            kind="verify", endpoint=verifier, targets=[target], samples=1, user=admin
        ).pk
    )
    analysis = VerifierAnalysis.objects.get()
    replies.script_meta(fake_llm, "divides by", replies.CONFIRM, replies.HALF, "no box at all")
    fake_llm.rules[-1].replies[-1] = text("no box at all")
    run = verifier_runs.verifier_run_start(
        kind="meta_verify", endpoint=meta, targets=[analysis], samples=3, user=admin
    )
    run = as_job("verifier_run", run.pk, lambda: verifier_runs.verifier_run_execute(run_id=run.pk))
    assert (run.status, run.done_count, run.failed_count) == ("failed", 2, 1)
    scores = sorted(
        (m.score, m.kept_contract) for m in MetaVerification.objects.all() if m.score is not None
    )
    assert scores == [(Decimal("0.5"), True), (Decimal("1"), True)]
    assert MetaVerification.objects.filter(score=None, kept_contract=False).count() == 1


def test_the_loop_labels_routes_and_fails_proofs(fake_llm, endpoints, admin):
    verifier, meta = endpoints
    clean, flawed, unsure, hallucinated, broken = (
        proof(name) for name in ("clean", "flawed", "unsure", "hallucinated", "broken")
    )
    route = CampaignFactory(scale="0-0.5-1")
    # clean: no analysis reports an issue -> 1
    replies.script_proof(fake_llm, clean, replies.CLEAN)
    # flawed: both analyses give 0 and are confirmed -> 0
    fatal = replies.analysis("0", "Flawed: step 3 fails for n = 2.")
    replies.script_proof(fake_llm, flawed, fatal)
    replies.script_meta(fake_llm, "Flawed: step 3", replies.CONFIRM)
    # unsure: one confirmed 0.5, one clean -> only one valid at the lowest score, k = 2 -> routed
    gap = replies.analysis("0.5", "Unsure: step 2 skips a case.")
    replies.script_proof(fake_llm, unsure, gap, replies.CLEAN)
    replies.script_meta(fake_llm, "Unsure: step 2", replies.CONFIRM)
    # hallucinated: the issue is rejected by every meta-verification -> 1
    made_up = replies.analysis("0", "Hallucinated: step 1 is wrong.")
    replies.script_proof(fake_llm, hallucinated, made_up)
    replies.script_meta(fake_llm, "Hallucinated: step 1", replies.REJECT)
    # broken: an analysis breaks the output contract -> failed (to retry)
    replies.script_proof(fake_llm, broken, replies.BROKEN, replies.CLEAN)

    run = labelling.labelling_run_start(
        proofs=[clean, flawed, unsure, hallucinated, broken],
        verifier=verifier,
        meta_verifier=meta,
        n=2,
        m=3,
        k=2,
        route_campaign=route,
        user=admin,
    )
    outcomes = run_loop(run)
    assert {p: (o.state, o.label) for p, o in outcomes.items()} == {
        clean.pk: ("labelled", Decimal("1")),
        flawed.pk: ("labelled", Decimal("0")),
        unsure.pk: ("routed", None),
        hallucinated.pk: ("labelled", Decimal("1")),
        broken.pk: ("failed", None),
    }
    assert (run.status, run.labelled_count, run.routed_count, run.failed_count) == (
        "succeeded",
        3,
        1,
        1,
    )
    assert run.prompt_tokens > 0 and run.completion_tokens > 0
    assert "analyses have no score" in outcomes[broken.pk].reason
    labels = FinalLabel.objects.filter(source="automatic")
    assert {(lab.item.proof_id, lab.value) for lab in labels} == {
        (clean.pk, Decimal("1")),
        (flawed.pk, Decimal("0")),
        (hallucinated.pk, Decimal("1")),
    }
    assert all(lab.item.campaign_id == run.auto_campaign_id and lab.item.is_final for lab in labels)
    assert "n=2, m=3, k=2" in labels.first().policy
    routed = Item.objects.get(campaign=route)
    assert routed.proof_id == unsure.pk and outcomes[unsure.pk].item_id == routed.pk
    # meta-verifications only for analyses reporting issues: flawed 2x3, unsure 3, hallucinated 2x3
    assert MetaVerification.objects.count() == 15

    # retry: the broken slot is asked for again, the good sample is kept
    calls = len(fake_llm.log)
    fake_llm.on((replies.VERIFIER_NEEDLE, broken.text), text(replies.CLEAN))
    fake_llm.rules.insert(0, fake_llm.rules.pop())
    assert labelling.labelling_run_retry_failed(run=run) == 1
    outcomes = run_loop(run)
    assert (outcomes[broken.pk].state, outcomes[broken.pk].label) == ("labelled", Decimal("1"))
    assert len(fake_llm.log) == calls + 1
    assert run.failed_count == 0 and run.labelled_count == 4


def test_half_confirmations_count_when_the_run_accepts_them(fake_llm, endpoints, admin):
    verifier, meta = endpoints
    target = proof("half")
    replies.script_proof(fake_llm, target, replies.analysis("0.5", "Half: a gap in step 2."))
    replies.script_meta(fake_llm, "Half: a gap", replies.HALF)
    strict = labelling.labelling_run_start(
        proofs=[target], verifier=verifier, meta_verifier=meta, n=1, m=1, k=1, user=admin
    )
    assert run_loop(strict)[target.pk].label == Decimal("1")  # 0.5 does not confirm: no issue
    lenient = labelling.labelling_run_start(
        proofs=[target],
        verifier=verifier,
        meta_verifier=meta,
        n=1,
        m=1,
        k=1,
        confirm_at=Decimal("0.5"),
        user=admin,
    )
    assert run_loop(lenient)[target.pk].label == Decimal("0.5")


def test_a_transient_error_is_raised_for_a_job_retry_then_recorded(fake_llm, endpoints, admin):
    verifier, meta = endpoints
    target = proof("flaky")
    fake_llm.on(target.text, status(503))
    run = labelling.labelling_run_start(
        proofs=[target], verifier=verifier, meta_verifier=meta, n=1, m=1, k=1, user=admin
    )
    outcome = run.outcomes.get()
    with pytest.raises(Exception, match="503"):
        as_job(
            "labelling",
            outcome.pk,
            lambda: labelling.labelling_outcome_execute(outcome_id=outcome.pk, final_attempt=False),
        )
    outcome.refresh_from_db()
    assert outcome.status == "retrying" and "retrying later" in outcome.reason
    outcome = as_job(
        "labelling",
        outcome.pk,
        lambda: labelling.labelling_outcome_execute(outcome_id=outcome.pk, final_attempt=True),
    )
    assert outcome.status == "failed" and "503" in outcome.reason


def test_start_refuses_impossible_settings(endpoints, admin):
    verifier, meta = endpoints
    with pytest.raises(labelling.LabellingError) as refused:
        labelling.labelling_run_start(
            proofs=[],
            verifier=verifier,
            meta_verifier=meta,
            n=2,
            m=1,
            k=3,
            confirm_at=Decimal("0.7"),
            user=admin,
        )
    message = str(refused.value)
    assert "k: 3 valid analyses can never be found among n = 2" in message
    assert "confirm_at" in message and "selection: no proofs selected" in message


def test_audit_sends_a_sample_to_experts_and_reports_agreement(fake_llm, endpoints, admin):
    verifier, meta = endpoints
    proofs = [proof(f"audit {i}") for i in range(4)]
    for p in proofs:
        replies.script_proof(fake_llm, p, replies.CLEAN)
    run = labelling.labelling_run_start(
        proofs=proofs, verifier=verifier, meta_verifier=meta, n=1, m=1, k=1, user=admin
    )
    run_loop(run)
    experts = CampaignFactory(scale="0-7", double_share=Decimal("0"))
    items = labelling.labelling_audit_send(run=run, campaign=experts, size=3, seed=7)
    assert len(items) == 3 and {i.campaign_id for i in items} == {experts.pk}
    again = labelling.labelling_audit_send(run=run, campaign=experts, size=3, seed=7)
    assert len(again) == 1  # only the one not sent yet
    from adjudication.services import final_label_set

    for item, value in zip(items, ["7", "7", "5"], strict=True):
        final_label_set(
            item=item, value=Decimal(value), source="single", policy="test", grade_ids=[]
        )
    report = labelling.labelling_audit_agreement(run)
    assert (report.sent, report.labelled_by_experts) == (4, 3)
    assert report.exact == pytest.approx(2 / 3)
    assert report.matrix[2] == [0, 1, 2]  # automatic 1 vs expert 0.5 once, 1 twice
    assert "7 -> 1, 5-6 -> 0.5" in report.conversion
    assert LabellingOutcome.objects.filter(audit_item__isnull=False).count() == 4


def test_repeated_runs_of_one_configuration_share_its_campaign(endpoints, admin):
    verifier, meta = endpoints
    first_proof, second_proof = proof("first"), proof("second")

    def start(proofs, **overrides):
        settings = {"n": 2, "m": 1, "k": 1} | overrides
        return labelling.labelling_run_start(
            proofs=proofs, verifier=verifier, meta_verifier=meta, user=admin, **settings
        )

    first = start([first_proof])
    again = start([second_proof])
    other = start([first_proof], k=2)
    assert again.auto_campaign_id == first.auto_campaign_id
    assert other.auto_campaign_id != first.auto_campaign_id
    assert "n = 2, m = 1, k = 2" in other.auto_campaign.name
    chosen = CampaignFactory(scale="0-0.5-1")
    assert start([second_proof], auto_campaign=chosen).auto_campaign_id == chosen.pk
    with pytest.raises(labelling.LabellingError, match="auto_campaign"):
        start([second_proof], auto_campaign=CampaignFactory(scale="0-7"))


def test_the_audit_reads_expert_means_between_values(fake_llm, endpoints, admin):
    verifier, meta = endpoints
    proofs = [proof(f"mean {i}") for i in range(3)]
    for p in proofs:
        replies.script_proof(fake_llm, p, replies.CLEAN)
    run = labelling.labelling_run_start(
        proofs=proofs, verifier=verifier, meta_verifier=meta, n=1, m=1, k=1, user=admin
    )
    run_loop(run)
    experts = CampaignFactory(scale="0-7", label_policy="mean", double_share=Decimal("0"))
    items = labelling.labelling_audit_send(run=run, campaign=experts, size=3, seed=0)
    from adjudication.services import final_label_set

    for item, value in zip(items, ["6.5", "6.67", "4.5"], strict=True):
        final_label_set(
            item=item, value=Decimal(value), source="agreement", policy="test", grade_ids=[]
        )
    report = labelling.labelling_audit_agreement(run)
    # automatic 1 (clean) against 6.5 -> 0.5, 6.67 -> 1, 4.5 -> 0
    assert report.matrix == [[0, 0, 0], [0, 0, 0], [1, 1, 1]]
    assert "halfway as the lower" in report.conversion


def test_a_job_that_cannot_be_queued_is_recorded_as_failed(
    endpoints, admin, dead_broker, django_capture_on_commit_callbacks
):
    verifier, meta = endpoints
    with django_capture_on_commit_callbacks(execute=True):
        run = labelling.labelling_run_start(
            proofs=[proof("unqueued")], verifier=verifier, meta_verifier=meta, n=1, m=1, k=1,
            user=admin,
        )  # fmt: skip
        vrun = verifier_runs.verifier_run_start(
            kind="verify", endpoint=verifier, targets=[proof("unqueued 2")], samples=1, user=admin
        )
    outcome = run.outcomes.get()
    assert outcome.status == "failed" and "could not be queued" in outcome.reason
    run.refresh_from_db()
    assert run.status == "succeeded" and run.failed_count == 1
    vrun.refresh_from_db()
    assert vrun.status == "failed" and "could not be queued" in vrun.error


INCOMPLETE_OR_MALFORMED = [
    ("unclosed think", "never closed"),
    ("length stop", "token limit"),
    ("missing contract phrase", "does not open with"),
    ("out-of-range score", "is not 0, 0.5 or 1"),
    ("cut inside the final box", "never closed: the text was cut off"),
    ("cut right after the final phrase", "nothing is boxed after"),
    ("two boxes after the final phrase", "2 boxes follow"),
]


def _bad_reply(kind: str, good: str):
    opening = good.split("\n", 1)[0]
    return {
        "unclosed think": unclosed_think(f"I check each step. {good}"),
        "length stop": text(good, finish_reason="length"),
        "missing contract phrase": text(good.replace(opening, "My review:")),
        "out-of-range score": text(good.replace("\\boxed{1}", "\\boxed{2}")),
        "cut inside the final box": text(good.replace("\\boxed{1}", "\\boxed{0")),
        "cut right after the final phrase": text(good.rsplit("\\boxed", 1)[0]),
        "two boxes after the final phrase": text(
            good.replace("\\boxed{1}", "\\boxed{0} or perhaps \\boxed{1}")
        ),
    }[kind]


@pytest.mark.parametrize(("kind", "reason"), INCOMPLETE_OR_MALFORMED)
def test_an_incomplete_or_malformed_analysis_is_a_failed_sample(
    fake_llm, endpoints, admin, kind, reason
):
    verifier, _ = endpoints
    target = proof(kind)
    fake_llm.on((replies.VERIFIER_NEEDLE, target.text), _bad_reply(kind, replies.CLEAN))
    run = verifier_runs.verifier_run_start(
        kind="verify", endpoint=verifier, targets=[target], samples=1, user=admin
    )
    run = as_job("verifier_run", run.pk, lambda: verifier_runs.verifier_run_execute(run_id=run.pk))
    assert (run.status, run.done_count, run.failed_count) == ("failed", 0, 1)
    assert reason in run.failures[0]
    stored = VerifierAnalysis.objects.get(proof=target)
    assert (stored.score, stored.kept_contract) == (None, False)
    assert reason in stored.score_problem and "final overall score" in stored.text  # raw kept
    # the loop never labels from it either
    loop = labelling.labelling_run_start(
        proofs=[target], verifier=verifier, meta_verifier=verifier, n=1, m=1, k=1, user=admin
    )
    (outcome,) = run_loop(loop).values()
    assert (outcome.status, outcome.label) == ("failed", None)
    assert reason in outcome.reason


@pytest.mark.parametrize(("kind", "reason"), INCOMPLETE_OR_MALFORMED)
def test_an_incomplete_or_malformed_meta_analysis_is_a_failed_sample(
    fake_llm, endpoints, admin, kind, reason
):
    verifier, meta = endpoints
    analysis = VerifierAnalysisFactory(text=replies.GAP, score=Decimal("0.5"))
    fake_llm.on((replies.META_NEEDLE, "divides by"), _bad_reply(kind, replies.CONFIRM))
    run = verifier_runs.verifier_run_start(
        kind="meta_verify", endpoint=meta, targets=[analysis], samples=1, user=admin
    )
    run = as_job("verifier_run", run.pk, lambda: verifier_runs.verifier_run_execute(run_id=run.pk))
    assert (run.status, run.done_count, run.failed_count) == ("failed", 0, 1)
    stored = MetaVerification.objects.get(analysis=analysis)
    assert (stored.score, stored.kept_contract) == (None, False)
    assert reason in stored.score_problem and reason in run.failures[0]
    # a retry asks again only for that sample, and a good reply fills it
    fake_llm.rules.clear()
    replies.script_meta(fake_llm, "divides by", replies.CONFIRM)
    run = verifier_runs.verifier_run_retry(run=run)
    run = as_job("verifier_run", run.pk, lambda: verifier_runs.verifier_run_execute(run_id=run.pk))
    assert (run.status, run.done_count, run.failed_count) == ("succeeded", 1, 0)
    assert len(fake_llm.log) == 2
    assert MetaVerification.objects.filter(analysis=analysis).count() == 2


def test_runs_cost_each_endpoints_tokens_at_its_prices(client, fake_llm, endpoints, admin):
    from django.urls import reverse

    verifier, meta = endpoints
    verifier.input_price_per_million, verifier.output_price_per_million = 1, 2
    verifier.save()
    meta.input_price_per_million, meta.output_price_per_million = 100, 200
    meta.save()
    flawed = proof("costly")
    replies.script_proof(fake_llm, flawed, replies.analysis("0", "Costly: step 3 fails."))
    replies.script_meta(fake_llm, "Costly: step 3", replies.CONFIRM)
    run = labelling.labelling_run_start(
        proofs=[flawed], verifier=verifier, meta_verifier=meta, n=1, m=1, k=1, user=admin
    )
    run_loop(run)
    run.refresh_from_db()
    meta_tokens = (run.meta_prompt_tokens, run.meta_completion_tokens)
    verifier_tokens = (
        run.prompt_tokens - run.meta_prompt_tokens,
        run.completion_tokens - run.meta_completion_tokens,
    )
    assert min(meta_tokens + verifier_tokens) > 0
    expected = (
        verifier_tokens[0] * 1
        + verifier_tokens[1] * 2
        + meta_tokens[0] * 100
        + meta_tokens[1] * 200
    ) / Decimal(1_000_000)
    assert run.spend.cost == expected
    client.force_login(admin)
    page = client.get(reverse("adjudication:labelling-run", args=[run.pk])).content.decode()
    assert 'id="run-cost"' in page and "$100.00 a million input" in page  # the meta price
    vrun = verifier_runs.verifier_run_start(
        kind="verify", endpoint=verifier, targets=[flawed], samples=1, user=admin
    )
    vrun = as_job(
        "verifier_run", vrun.pk, lambda: verifier_runs.verifier_run_execute(run_id=vrun.pk)
    )
    page = client.get(reverse("adjudication:verifier-run", args=[vrun.pk])).content.decode()
    assert f"{vrun.prompt_tokens} prompt + {vrun.completion_tokens} completion tokens" in page
    assert 'id="run-cost"' in page and "a million output tokens" in page
