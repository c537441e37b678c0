"""The `judgements` export (issue 23 item 3): one row per judgement of the campaign's proofs, by
experts (pseudonymised) and models (verifier samples, meta-verifications, grader predictions,
imported ratings), each on its own scale and on the campaign's; by command, API and page, in a
fixed number of queries per batch of proofs."""

import json
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from adjudication.models import MetaVerification
from exports.formats import ExportOptions, plan_for
from exports.services import export_file_open, export_run
from graders.models import GraderEvaluation, GraderPrediction
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory
from tests.problems.page_factories import VerifierAnalysisFactory, sha256

pytestmark = pytest.mark.django_db


def campaign_judged_by_everyone():
    """labelled_campaign's four expert grades, plus, on GOLDEN-PILOT-1 model-a: two verifier
    samples, a meta-verification of the first, a grader's two runs and two imported ratings."""
    corpus = labelled_campaign()
    item = corpus.items[0]
    proof = item.proof
    proof.metadata |= {
        "imported_ratings": [
            {"source": "proofbench x.jsonl", "kind": "expert", "value": 6.5, "max": 7},
            {"source": "deepseek y.jsonl", "kind": "automatic", "value": 0.75, "max": 1},
        ]
    }
    proof.save()
    first, _ = (
        VerifierAnalysisFactory(
            proof=proof, verifier="dsm-v2", sample_key=str(n), score=Decimal(score),
            text=f"analysis {n}", text_hash=sha256(f"judged {n}"),
        )
        for n, score in ((0, "0.5"), (1, "1"))
    )  # fmt: skip
    MetaVerification.objects.create(
        analysis=first,
        verifier="dsm-meta",
        sample_key="0",
        text="meta",
        score=Decimal(1),
        kept_contract=True,
    )
    evaluation = GraderEvaluation.objects.create(
        campaign=corpus.campaign, name="o3 REF+MS", source="proofgrader_jsonl"
    )
    for run, score in ((0, 4.0), (1, 6.0)):
        GraderPrediction.objects.create(
            evaluation=evaluation, item=item, run_index=run, score=score
        )
    return corpus, evaluation


def test_every_judgement_is_a_row_on_its_scale_and_the_campaigns(tmp_path):
    corpus, evaluation = campaign_judged_by_everyone()
    out = tmp_path / "judgements.jsonl"
    call_command(
        "export_dataset", "--campaign", corpus.campaign.slug, "--format", "judgements",
        "--file-type", "jsonl", "--out", str(out),
    )  # fmt: skip
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    first = corpus.items[0]
    mine = [r for r in rows if (r["problem_id"], r["generator"]) == ("GOLDEN-PILOT-1", "model-a")]
    seen = sorted(
        (r["judge_kind"], r["run"], r["value"], r["scale"], r["value_on_campaign_scale"])
        for r in mine
    )
    assert seen == [
        ("expert", "", 5.0, "0-7", 5.0),
        ("expert", "", 6.0, "0-7", 6.0),
        ("grader", "0", 4.0, "0-7", 4.0),
        ("grader", "1", 6.0, "0-7", 6.0),
        ("imported_automatic", "1", 0.75, "0-0.5-1", None),  # 0 / 0.5 / 1 has no map onto 0-7
        ("imported_expert", "0", 6.5, "0-7", 6.5),  # kept between values
        ("meta_verifier", "0", 1.0, "0-0.5-1", None),
        ("verifier", "0", 0.5, "0-0.5-1", None),
        ("verifier", "1", 1.0, "0-0.5-1", None),
    ]
    # the meta-verification judges an analysis, which has no item in a proof-grading campaign
    assert {r["judge_kind"]: r["item_id"] for r in mine} == {
        "expert": first.pk, "grader": first.pk, "imported_automatic": first.pk,
        "imported_expert": first.pk, "meta_verifier": None, "verifier": first.pk,
    }  # fmt: skip
    assert {r["sample_key"] for r in mine} == {"0"}
    meta = next(r for r in mine if r["judge_kind"] == "meta_verifier")
    assert meta["analysis_id"] is not None and meta["judge"] == "dsm-meta"
    grader = next(r for r in mine if r["judge_kind"] == "grader")
    assert grader["judge"] == f"o3 REF+MS (evaluation {evaluation.pk})"
    experts = {r["judge"] for r in rows if r["judge_kind"] == "expert"}
    assert len(experts) == 2 and all(e.startswith("expert-") for e in experts)
    assert "golden-pilot-ann" not in out.read_text()  # pseudonyms, as the annotations export
    assert len(rows) == 4 + 2 + 1 + 2 + 2  # every grade, sample, meta, run and imported rating
    manifest = json.loads(out.with_name(out.name + ".manifest.json").read_text())
    assert manifest["counts"]["rows"] == manifest["counts"]["rows_before_split_filter"] == 11


def test_on_a_ternary_campaign_scores_go_through_the_cut_points(tmp_path):
    corpus = labelled_campaign(slug="ternary-judged", scale="0-0.5-1")
    item = corpus.items[0]
    evaluation = GraderEvaluation.objects.create(
        campaign=corpus.campaign, name="g", source="proofgrader_jsonl"
    )
    GraderPrediction.objects.create(evaluation=evaluation, item=item, run_index=0, score=6.0)
    plan = plan_for("judgements", corpus.campaign, ExportOptions(cuts=(6, 7)))
    grader = next(r for r in plan.rows() if r["judge_kind"] == "grader")
    assert (grader["value"], grader["value_on_campaign_scale"]) == (6.0, 0.5)  # 6 >= cut 6


def test_a_batch_of_proofs_costs_the_same_queries_however_many_judgements(monkeypatch):
    corpus, _ = campaign_judged_by_everyone()
    monkeypatch.setattr("exports.formats.judgements.BATCH", 2)  # 3 proofs: 2 batches
    plan = plan_for("judgements", corpus.campaign, ExportOptions())
    with CaptureQueriesContext(connection) as queries:
        rows = list(plan.rows())
    assert len(rows) == 11
    # per batch: its proof ids, the proofs, the items, grades, analyses, meta-verifications,
    # predictions; then the empty look for a third batch
    assert len(queries) == 2 * 7 + 1, [q["sql"][:80] for q in queries]


def test_the_api_and_the_page_offer_judgements(api_client_for, client, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    corpus, _ = campaign_judged_by_everyone()
    researcher = UserFactory(username="res-judgements", roles=["researcher"])
    response = api_client_for(researcher).post(
        "/api/v1/exports/",
        {"campaign": corpus.campaign.slug, "format": "judgements", "file_type": "csv"},
        format="json",
    )
    assert response.status_code == 201, response.content
    job = export_run(job_id=response.json()["id"])
    assert job.status == "succeeded", job.error
    handle, name = export_file_open(job, "data")
    with handle:
        lines = handle.read().decode().splitlines()
    assert name.endswith("-judgements.csv") and len(lines) == 1 + 11
    assert lines[0].startswith(
        "problem_id,generator,sample_key,statement_version,analysis_id,item_id,campaign,"
    )
    client.force_login(researcher)
    page = client.get(reverse("exports:list")).content.decode()
    assert 'value="judgements"' in page


def test_the_label_formats_filters_apply():
    corpus, _ = campaign_judged_by_everyone()
    by_generator = plan_for("judgements", corpus.campaign, ExportOptions(generator="model-b"))
    assert {(r["generator"], r["judge_kind"]) for r in by_generator.rows()} == {
        ("model-b", "expert")
    }
    single = plan_for("judgements", corpus.campaign, ExportOptions(label_sources=("single",)))
    assert [(r["problem_id"], r["value"]) for r in single.rows()] == [("GOLDEN-PILOT-2", 7.0)]
    agreeing = plan_for("judgements", corpus.campaign, ExportOptions(min_agreement=0.8))
    assert len(list(agreeing.rows())) == 11 - 2  # the double-scored proof only (6 and 5)
