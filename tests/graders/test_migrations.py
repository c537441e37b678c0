"""The grader evaluation models moved from exports to graders (graders 0001, exports 0007) on the
tables they had: migrate back to before the move, write an evaluation, a prediction and a failure
there, migrate forwards, and read them through today's models."""

from graders.models import GraderEvaluation, GraderPrediction, GraderPredictionFailure

BEFORE = [("exports", "0006_job_status_one_vocabulary"), ("graders", None)]


def test_the_evaluations_keep_their_rows_when_they_move_to_graders(migrations):
    old = migrations.models_before(BEFORE)
    campaign = old.get_model("annotation", "Campaign").objects.create(slug="main", name="Main")
    problem = old.get_model("problems", "Problem").objects.create(external_id="P-1")
    proof = old.get_model("problems", "Proof").objects.create(
        problem=problem, generator="model", sample_key="0", text="A proof.", text_hash="h"
    )
    item = old.get_model("annotation", "Item").objects.create(campaign=campaign, proof=proof)
    evaluation = old.get_model("exports", "GraderEvaluation").objects.create(
        campaign=campaign, name="o3", source="proofgrader_jsonl", status="succeeded"
    )
    old.get_model("exports", "GraderPrediction").objects.create(
        evaluation=evaluation, item=item, score=6.0
    )
    old.get_model("exports", "GraderPredictionFailure").objects.create(
        evaluation=evaluation, item=item, run_index=1, reason="no score"
    )

    migrations.migrate()

    moved = GraderEvaluation.objects.get(pk=evaluation.pk)
    assert (moved.name, moved.campaign.slug, moved.status) == ("o3", "main", "succeeded")
    assert moved.predictions.get().score == 6.0
    assert moved.failures.get().reason == "no score"
    assert GraderEvaluation._meta.db_table == "exports_graderevaluation"
    assert GraderPrediction._meta.db_table == "exports_graderprediction"
    assert GraderPredictionFailure._meta.db_table == "exports_graderpredictionfailure"
    moved.delete()  # with its prediction and failure
    assert not GraderPrediction.objects.exists() and not GraderPredictionFailure.objects.exists()
