"""adjudication 0011: the labelling loop's per-proof rows keep their state in the one JobStatus;
a row that was labelled or routed becomes succeeded with that decision, the rest keep theirs,
and the database refuses a decision without success."""

import pytest
from django.db import IntegrityError, transaction

from adjudication.models import LabellingOutcome

BEFORE = [("adjudication", "0010_verdict_only_from_a_kept_contract")]


def test_old_outcomes_become_a_status_and_a_decision(migrations):
    old = migrations.models_before(BEFORE)
    endpoint = old.get_model("rubrics", "LLMEndpoint").objects.create(
        name="v", base_url="http://127.0.0.1:1/v1", model="v"
    )
    campaign = old.get_model("annotation", "Campaign").objects.create(slug="auto", name="Auto")
    run = old.get_model("adjudication", "LabellingRun").objects.create(
        verifier=endpoint, meta_verifier=endpoint, auto_campaign=campaign
    )
    problem = old.get_model("problems", "Problem").objects.create(external_id="P1", statement="s")
    Proof = old.get_model("problems", "Proof")
    Outcome = old.get_model("adjudication", "LabellingOutcome")
    ids = {}
    for n, state in enumerate(("pending", "running", "labelled", "routed", "failed")):
        proof = Proof.objects.create(
            problem=problem, generator="g", sample_key=str(n), text="t", text_hash=str(n)
        )
        ids[state] = Outcome.objects.create(run=run, proof=proof, outcome=state).pk

    migrations.migrate()

    found = {
        state: LabellingOutcome.objects.values_list("status", "decision").get(pk=pk)
        for state, pk in ids.items()
    }
    assert found == {
        "pending": ("pending", ""),
        "running": ("running", ""),
        "labelled": ("succeeded", "labelled"),
        "routed": ("succeeded", "routed"),
        "failed": ("failed", ""),
    }
    with pytest.raises(IntegrityError), transaction.atomic():
        LabellingOutcome.objects.filter(pk=ids["failed"]).update(decision="labelled")
    with pytest.raises(IntegrityError), transaction.atomic():
        LabellingOutcome.objects.filter(pk=ids["routed"]).update(decision="")
