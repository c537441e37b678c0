"""The `pairs` export: one row per submitted judgement of a pairwise campaign with both proofs'
keys, the choice against those keys (not the screen's order), the shown order and the expert's
pseudonym; its manifest and card; refused for a campaign of another kind and while a pair is
held blind."""

import json

import pytest

from annotation.models import PairJudgement
from annotation.services.pairs import pair_judgement_submit, pair_next
from core.visibility import BlindWork
from exports.formats import ExportError, ExportOptions, plan_for, pseudonym
from exports.services import export_create, export_file_open, export_run
from tests.annotation.factories import CampaignFactory
from tests.annotation.pair_factories import pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _judged():
    campaign, proofs, (one, two) = pairwise_campaign(generators=("model-a", "model-b"))
    for expert in (one, two):
        j = pair_next(campaign=campaign, expert=expert)
        # both prefer model-a's proof, whichever side it was on
        a_is_model_a = j.pair.proof_a_id == proofs[0, "model-a"].pk
        shown = "left" if a_is_model_a == j.a_on_left else "right"
        pair_judgement_submit(judgement_id=j.pk, expert=expert, shown=shown, reason="complete")
    return campaign, proofs, (one, two)


def test_rows_carry_keys_normalised_choice_shown_order_and_pseudonym():
    campaign, proofs, (one, two) = _judged()
    rows = list(plan_for("pairs", campaign, ExportOptions()).rows())
    assert len(rows) == 2
    winner = proofs[0, "model-a"]
    for row in rows:
        a_key = (row["a_generator"], row["a_sample_key"])
        assert {row["a_generator"], row["b_generator"]} == {"model-a", "model-b"}
        winner_side = "a" if a_key == (winner.generator, winner.sample_key) else "b"
        assert row["choice"] == winner_side and row["final_choice"] == winner_side
        assert row["label_source"] == "agreement" and row["reason"] == "complete"
        assert row["problem_id"] == winner.problem.external_id
    shown = {
        pseudonym(j.expert_id): "a" if j.a_on_left else "b"
        for j in PairJudgement.objects.filter(pair__campaign=campaign)
    }
    assert {row["judge"]: row["shown_left"] for row in rows} == shown
    named = list(plan_for("pairs", campaign, ExportOptions(expert_names=True)).rows())
    assert {row["judge"] for row in named} == {one.username, two.username}
    split = list(plan_for("pairs", campaign, ExportOptions(test_fraction=0.5)).rows())
    assert {row["split"] for row in split} <= {"train", "test"}


def test_the_job_writes_file_manifest_and_card(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    campaign, _, _ = _judged()
    admin = UserFactory(roles=["admin"])
    job = export_create(user=admin, campaign=campaign, fmt="pairs", file_type="jsonl", filters={})
    job = export_run(job_id=job.pk)
    assert job.status == "succeeded", job.error
    handle, _ = export_file_open(job, "data")
    with handle:
        rows = [json.loads(line) for line in handle.read().decode().splitlines()]
    assert len(rows) == 2 and set(rows[0]) >= {"a_sample_key", "b_sample_key", "shown_left"}
    assert job.manifest["format"] == "pairs" and job.manifest["task_kind"] == "pairwise"
    assert {c["name"] for c in job.manifest["columns"]} >= {"choice", "judge", "shown_left"}
    handle, _ = export_file_open(job, "card")
    with handle:
        card = handle.read().decode()
    assert "`shown_left`" in card and "normalised" in card


def test_refused_for_another_kind_and_while_held_blind():
    with pytest.raises(ExportError, match="not a pairwise campaign"):
        plan_for("pairs", CampaignFactory(), ExportOptions())
    campaign, _, _ = pairwise_campaign(generators=("model-a", "model-b"))
    researcher = UserFactory(roles=["researcher", "expert"])
    campaign.members.create(user=researcher, role="expert")
    with pytest.raises(BlindWork):
        export_create(user=researcher, campaign=campaign, fmt="pairs", file_type="csv", filters={})
