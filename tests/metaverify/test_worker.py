"""The labelling loop through the real path once: committed run -> jobs on Redis -> the Celery
worker process -> the fake server (reached through the endpoint rows' base URL) -> final labels
and routed items in the database."""

from decimal import Decimal

import pytest

from adjudication.models import FinalLabel, LabellingRun, VerifierRun
from adjudication.verification import labelling, verifier_runs
from annotation.models import Item
from problems.models import VerifierAnalysis
from tests.annotation.factories import CampaignFactory
from tests.conftest import wait_for
from tests.factories import UserFactory
from tests.metaverify import replies
from tests.problems.page_factories import ProofFactory
from tests.rubrics.generation_factories import LLMEndpointFactory

pytestmark = [pytest.mark.worker]


def test_loop_and_verifier_run_through_the_celery_worker(
    transactional_db, celery_worker_process, fake_llm
):
    admin = UserFactory(username="loop-admin", roles=["admin"])
    verifier = LLMEndpointFactory(base_url=fake_llm.base_url, model="worker-v", api_key_env="")
    meta = LLMEndpointFactory(base_url=fake_llm.base_url, model="worker-m", api_key_env="")
    clean = ProofFactory(text="Worker proof clean: all good.")
    flawed = ProofFactory(text="Worker proof flawed: a gap.")
    replies.script_proof(fake_llm, clean, replies.CLEAN)
    replies.script_proof(fake_llm, flawed, replies.analysis("0", "Worker flaw: step 2 fails."))
    replies.script_meta(fake_llm, "Worker flaw", replies.CONFIRM, replies.REJECT)
    route = CampaignFactory(scale="0-0.5-1")

    run = labelling.labelling_run_start(
        proofs=[clean, flawed],
        verifier=verifier,
        meta_verifier=meta,
        n=1,
        m=2,
        k=1,
        route_campaign=route,
        user=admin,
    )
    finished = wait_for(
        lambda: LabellingRun.objects.filter(pk=run.pk, status="succeeded").first(), timeout=90
    )
    outcomes = {o.proof_id: o for o in finished.outcomes.all()}
    # flawed: one of two meta-verifications confirms: not a majority -> no valid issue -> 1
    assert {p: (o.state, o.label) for p, o in outcomes.items()} == {
        clean.pk: ("labelled", Decimal("1")),
        flawed.pk: ("labelled", Decimal("1")),
    }, [o.reason for o in outcomes.values()]
    assert FinalLabel.objects.filter(source="automatic").count() == 2
    assert finished.prompt_tokens > 0
    assert not Item.objects.filter(campaign=route).exists()

    vrun = verifier_runs.verifier_run_start(
        kind="verify", endpoint=verifier, targets=[clean], samples=2, user=admin
    )
    done = wait_for(
        lambda: VerifierRun.objects.filter(pk=vrun.pk, finished_at__isnull=False).first(),
        timeout=90,
    )
    assert done.status == "succeeded" and done.done_count == 2
    assert VerifierAnalysis.objects.filter(proof=clean, sample_key__startswith="run").count() == 2
