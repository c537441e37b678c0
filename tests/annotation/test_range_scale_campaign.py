"""A 0-10 campaign end to end through the services: created with its scale, graded by two
experts, a disagreement adjudicated, agreement, score intervals, a grader evaluated against
its labels, and the exports with both maps of the scale stated."""

import json
from decimal import Decimal

import pytest
from django.urls import reverse

from adjudication.metrics import campaign_agreement
from adjudication.models import AdjudicationCase, FinalLabel
from adjudication.services import case_resolve
from annotation import services
from annotation.forms import CampaignForm
from estimation.services.intervals import campaign_score_intervals, parse_width
from exports.formats import ExportOptions
from exports.services import companion_paths, dataset_write
from graders.services.evaluation_import import evaluation_import
from graders.services.evaluation_report import evaluation_report
from tests.annotation.factories import expert_in
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory

pytestmark = pytest.mark.django_db

# (expert 1, expert 2) on 0-10; tolerance 2: the last pair goes to adjudication
SCORES = [(10, 10), (8, 9), (3, 9)]


def submit(client, item_id, score):
    url = reverse("api-item-submit", args=[item_id])
    response = client.post(url, json.dumps({"score": str(score)}), content_type="application/json")
    assert response.status_code == 200, response.json()


def test_a_0_10_campaign_from_grading_to_export(client, tmp_path):
    admin = UserFactory(username="range-admin", roles=["admin", "adjudicator"])
    campaign = services.campaign_create(
        name="Putnam on its own scale",
        created_by=admin,
        scale="0-10",
        double_share=Decimal(1),
        tolerance=Decimal(2),
    )
    problem = ProblemFactory(external_id="PUTNAM-2024-B5")
    proofs = [
        ProofFactory(problem=problem, generator="model-a", text=f"Proof {i}.") for i in range(3)
    ]
    services.items_create_from_selection(campaign=campaign, proofs=proofs)
    experts = [expert_in(campaign, "range-e1"), expert_in(campaign, "range-e2")]

    # the grading page offers 0-10 as a row of numbers, typed as numbers
    client.force_login(experts[0])
    item_url = client.post(reverse("annotation:next", args=[campaign.slug])).url
    html = client.get(item_url).content.decode()
    assert html.count('class="score-number"') == 11 and 'value="10"' in html
    assert "two digits in quick succession" in html

    by_proof = {item.proof_id: item for item in campaign.items.all()}
    score_of = {by_proof[p.pk].pk: pair for p, pair in zip(proofs, SCORES, strict=True)}
    for index, expert in enumerate(experts):
        client.force_login(expert)
        for _ in proofs:
            item_id = services.assignment_next(campaign=campaign, expert=expert).item_id
            # 11 is not on the scale: refused, naming the scale
            url = reverse("api-item-submit", args=[item_id])
            refused = client.post(url, json.dumps({"score": "11"}), content_type="application/json")
            assert refused.status_code == 400, refused.content
            assert "11.00 is not on the 0-10 integers scale" in refused.content.decode()
            submit(client, item_id, score_of[item_id][index])

    case = AdjudicationCase.objects.get(item=by_proof[proofs[2].pk])
    case_resolve(case=case, user=admin, action="new_score", score="6", rationale="Half of it.")
    labels = dict(FinalLabel.objects.values_list("item__proof_id", "value"))
    assert labels == {proofs[0].pk: 10, proofs[1].pk: 8, proofs[2].pk: 6}  # mean floor; adjudicated

    agreement = campaign_agreement(campaign, n_resamples=50)
    assert agreement.labels == [float(v) for v in range(11)]
    assert agreement.n_items_multi == 3
    assert len(agreement.confusion) == 11

    width = parse_width("", campaign.scale)
    assert width == pytest.approx(1.0)  # a tenth of the scale's range
    [row] = campaign_score_intervals(campaign=campaign, width=width)
    assert row.generator == "model-a" and row.expert_labels == 3

    predictions = "".join(
        json.dumps(
            {
                "problem_id": "PUTNAM-2024-B5",
                "generator": "model-a",
                "response_number": i,
                "score": s,
            }
        )
        + "\n"
        for i, s in zip(range(3), (7, 5, 4), strict=True)
    )
    for proof, index in zip(proofs, range(3), strict=True):
        proof.sample_index = index
        proof.save(update_fields=["sample_index"])
    evaluation = evaluation_import(
        user=admin,
        campaign=campaign,
        name="grader-x",
        source="proofgrader_jsonl",
        data=predictions.encode(),
    )
    report = evaluation_report(evaluation)
    assert report["comparison_scale"] == "0-7"
    assert report["conversions"] == [
        "expert labels from 0-10 onto 0-7: x -> 7x / 10, linear, the number kept (10 -> 7, 0 -> 0)"
    ]
    assert report["proofbench"]["mae"] == pytest.approx((0 + 0.6 + 0.2) / 3)

    for fmt in ("proofbench", "dv", "annotations"):
        out = tmp_path / f"{fmt}.jsonl"
        manifest = dataset_write(
            campaign=campaign,
            fmt=fmt,
            file_type="jsonl",
            options=ExportOptions.from_dict({}),
            out=out,
        )
        assert manifest["scale"] == "0-10"
        assert manifest["scale_maps"]["to_ternary"].startswith(
            "cut points 5 and 7 of 0-7 on 0-10 (8 and 10): 10 -> 1, 8-9 -> 0.5, 0-7 -> 0"
        )
        card = companion_paths(out)[1].read_text()
        assert "- Onto 0-7: x -> 7x / 10, linear" in card
        assert "- Onto 0 / 0.5 / 1: cut points 5 and 7 of 0-7 on 0-10 (8 and 10)" in card
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        if fmt == "proofbench":
            assert sorted((r["expert_rating"], r["native_rating"]) for r in rows) == [
                (4.2, 6.0),
                (5.6, 8.0),
                (7.0, 10.0),
            ]
            assert "expert_rating from 0-10 onto 0-7" in manifest["conversions"][0]["description"]
        if fmt == "dv":
            assert sorted((r["score"], r["native_score"]) for r in rows) == [
                (0.0, 6.0),
                (0.5, 8.0),
                (1.0, 10.0),
            ]
            assert "10 -> 1, 8-9 -> 0.5, 0-7 -> 0" in manifest["conversions"][0]["description"]
        if fmt == "annotations":
            assert len(rows) == 6


def test_the_campaign_form_takes_any_integer_range():
    form = CampaignForm(
        data={
            "name": "x",
            "task_kind": "proof_grading",
            "scale": "0-7",
            "scale_range": "0-20",
            "double_share": "0.4",
            "sample_seed": "0",
            "tolerance": "3",
            "label_policy": "mean_floor",
            "lease_minutes": "60",
            "gold_rate": "0",
            "fast_seconds": "60",
            "status": "open",
        }
    )
    assert form.is_valid(), form.errors
    assert form.cleaned_data["scale"] == "0-20" and "scale_range" not in form.cleaned_data
    bad = CampaignForm(data={**form.data, "scale_range": "0-60"})
    assert not bad.is_valid() and "scale_range" in bad.errors
    with pytest.raises(services.CampaignError, match="tolerance: give a number from 0 to 4"):
        services.campaign_create(name="narrow", created_by=None, scale="0-4", tolerance=Decimal(5))
    with pytest.raises(services.CampaignError, match="scale: unknown scale '0-60'"):
        services.campaign_create(name="wide", created_by=None, scale="0-60")
