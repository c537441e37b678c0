"""Label confidence (a rater model over experts and automatic graders) and each generator's
scores with intervals: the services on a real database, the pages, the APIs and the export."""

import csv
import io
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from adjudication.models import FinalLabel
from adjudication.services.labels import final_label_set
from annotation.models import Item
from estimation.models import RaterModelFit, RaterModelRefit
from estimation.routing.services import campaign_routing_set
from estimation.services.confidence import campaign_rater_model_fit, rater_model_store
from estimation.services.intervals import campaign_score_intervals
from estimation.services.refit import rater_model_refit_run
from jobs.models import JobStatus
from jobs.services import task_by_name
from tests.annotation.factories import CampaignFactory, ItemFactory
from tests.exports.factories import graded_by_experts_and_graders
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    return graded_by_experts_and_graders()


def test_the_fit_gives_every_label_a_confidence_and_finds_the_confidently_wrong_verifier(
    campaign,
):
    fit = campaign_rater_model_fit(campaign_id=campaign.pk)
    assert fit.classes == ["0", "0.5", "1"] and fit.gold == 6 and fit.items == 40
    raters = {r["name"]: r for r in fit.raters}
    assert set(raters) == {"expert-a", "overconfident", "good grader"}
    # unanimous and wrong half the time: its error rate shows it, where its spread was 0
    assert raters["overconfident"]["error_rate"] > 0.4
    assert raters["good grader"]["error_rate"] < 0.25
    for rater in fit.raters:
        assert all(sum(row) == pytest.approx(1, abs=1e-5) for row in rater["confusion"])
    labels = FinalLabel.objects.filter(item__campaign=campaign)
    assert labels.count() == 24 and not labels.filter(confidence__isnull=True).exists()
    assert labels.filter(source="adjudication").first().confidence == 1.0  # gold: known
    # a changed label keeps the last fit's confidence, stale (changed after the fit) until the
    # refit its change queues lands
    label = labels.filter(source="single").first()
    final_label_set(item=label.item, value=Decimal(0), source="single", policy="x", grade_ids=[])
    changed = FinalLabel.objects.get(item=label.item)
    assert changed.confidence == label.confidence and changed.updated_at > fit.fitted_at


def test_routing_takes_the_models_doubt_where_the_verifier_is_unanimous(campaign):
    unlabelled = Item.objects.filter(campaign=campaign, final_label__isnull=True)
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=None)
    before = {i.pk: i.route_components for i in unlabelled}
    assert {c["model_doubt"] for c in before.values()} == {None}
    campaign_rater_model_fit(campaign_id=campaign.pk)
    campaign_routing_set(campaign=campaign, item_order="uncertainty", budget=None)
    after = {i.pk: i for i in Item.objects.filter(pk__in=list(before))}
    for item in after.values():
        assert item.route_components["spread"] == 0.0  # four unanimous scores
        assert item.route_components["model_doubt"] is not None
    # the proofs the verifier gets wrong (truth 0) are the ones the model now doubts most
    wrong = [i for i in after.values() if campaign.truth[i.pk] == 0]
    right = [i for i in after.values() if campaign.truth[i.pk] == 1]
    assert min(i.route_uncertainty for i in wrong) >= max(i.route_uncertainty for i in right)


def test_scores_per_generator_with_both_intervals(campaign):
    rows = {r.generator: r for r in campaign_score_intervals(campaign=campaign, width=0.1)}
    assert set(rows) == {"model-a", "model-b"}
    a = rows["model-a"]
    assert (a.items, a.expert_labels, a.automatic_only, a.paired) == (20, 12, 8, 12)
    assert a.human.low <= a.human.mean <= a.human.high
    assert a.ppi.low <= a.ppi.mean <= a.ppi.high
    assert a.human_needed > 12
    with CaptureQueriesContext(connection) as queries:
        campaign_score_intervals(campaign=campaign, width=0.1)
    assert len(queries) == 4  # items, analyses, predictions, imported ratings


def test_agreement_page_and_api_show_the_confidence_and_each_raters_matrix(
    campaign, client, api_client_for
):
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    page = client.get(reverse("adjudication:dashboard", args=[campaign.slug])).content.decode()
    assert "No rater model fitted yet" in page
    campaign_rater_model_fit(campaign_id=campaign.pk)  # what the queued refit does, in a worker
    page = client.get(reverse("adjudication:dashboard", args=[campaign.slug])).content.decode()
    assert 'id="rater-confusions"' in page
    assert page.count('rater-confusion"') == 3 and "overconfident" in page
    labels = client.get(reverse("adjudication:labels", args=[campaign.slug])).content.decode()
    assert "Confidence" in labels
    body = api_client_for(admin).get(reverse("api-campaign-agreement", args=[campaign.slug])).json()
    model = body["rater_model"]
    assert model["with_confidence"] == 24 and len(model["raters"]) == 3
    assert len(model["raters"][0]["confusion"]) == 3


def _refit_messages(monkeypatch) -> list:
    """The refit task's messages, recorded instead of sent (no worker here): [(args, countdown)]."""
    found = []
    task = type(task_by_name("estimation.rater_model_refit"))
    monkeypatch.setattr(
        task,
        "apply_async",
        lambda self, args, countdown=None, **kw: found.append((args, countdown)),
    )
    return found


def test_the_fit_button_and_api_queue_the_debounced_refit_and_never_fit_in_the_request(
    client, api_client_for, monkeypatch, settings, django_capture_on_commit_callbacks
):
    settings.RATER_MODEL_REFIT_DEBOUNCE_SECONDS = 7
    sent = _refit_messages(monkeypatch)
    campaign = graded_by_experts_and_graders()
    RaterModelRefit.objects.filter(campaign=campaign).delete()  # the factory's own changes
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    url = reverse("exports:rater_model_fit", args=[campaign.slug])
    dashboard = reverse("adjudication:dashboard", args=[campaign.slug])

    # a plain form post: queued, back to the page, which says so and polls
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, follow=True)
    page = response.content.decode()
    assert "Refit queued: it runs in the background" in page
    assert not RaterModelFit.objects.filter(campaign=campaign).exists()  # nothing fitted here
    refit = RaterModelRefit.objects.get(campaign=campaign)
    assert (refit.status, refit.reason) == (JobStatus.PENDING, "asked by an admin")
    assert sent == [((refit.pk,), 7)]  # the same debounced job a change queues
    assert 'data-state="queued"' in page and 'hx-trigger="every 2s"' in page
    assert "Refit queued</button>" in page and "disabled" in page

    # htmx: the button's answer is the fit's state alone; a second press joins the waiting refit
    with django_capture_on_commit_callbacks(execute=True):
        fragment = client.post(url, headers={"HX-Request": "true"})
    body = fragment.content.decode()
    assert fragment.status_code == 200 and body.startswith('<div id="fit-status"')
    assert "refit queued" in body and "<h2" not in body
    assert RaterModelRefit.objects.get(campaign=campaign).changes == 2 and len(sent) == 1

    # the poll while it runs, then after it landed: htmx is asked to reload the page
    RaterModelRefit.objects.filter(pk=refit.pk).update(status=JobStatus.RUNNING)
    poll = client.get(dashboard, {"fit_status": "1"}, headers={"HX-Request": "true"})
    assert 'data-state="running"' in poll.content.decode() and "HX-Refresh" not in poll
    assert "Fitting" in poll.content.decode()
    rater_model_refit_run(refit_id=refit.pk)
    poll = client.get(dashboard, {"fit_status": "1"}, headers={"HX-Request": "true"})
    assert poll["HX-Refresh"] == "true" and 'data-state="current"' in poll.content.decode()
    assert "hx-trigger" not in poll.content.decode()
    assert client.get(dashboard, {"fit_status": "maybe"}).status_code == 400

    # the API: 202 with the refit's state, no fit in the request
    fitted_at = RaterModelFit.objects.get(campaign=campaign).fitted_at
    with django_capture_on_commit_callbacks(execute=True):
        answer = api_client_for(admin).post(reverse("api-rater-model-fit", args=[campaign.slug]))
    assert answer.status_code == 202
    assert answer.json()["state"] == "queued" and answer.json()["refit"] is not None
    assert "refit queued" in answer.json()["fit_age"]
    assert RaterModelFit.objects.get(campaign=campaign).fitted_at == fitted_at
    expert = UserFactory(roles=["expert"])
    assert (
        api_client_for(expert)
        .post(reverse("api-rater-model-fit", args=[campaign.slug]))
        .status_code
        == 403
    )


def test_scores_page_api_and_csv(campaign, client, api_client_for):
    researcher = UserFactory(roles=["researcher"])
    client.force_login(researcher)
    url = reverse("exports:scores", args=[campaign.slug])
    page = client.get(url).content.decode()
    assert 'id="score-intervals"' in page and "<svg" in page and "model-a" in page
    bad = client.get(url, {"width": "wide"})
    assert bad.status_code == 400 and "width" in bad.content.decode()
    api = api_client_for(researcher)
    found = api.get(reverse("api-score-intervals", args=[campaign.slug]), {"width": "0.2"})
    assert found.status_code == 200
    body = found.json()
    assert body["width"] == 0.2 and [g["generator"] for g in body["generators"]] == [
        "model-a",
        "model-b",
    ]
    assert body["generators"][0]["ppi"]["n"] == 12
    refused = api.get(reverse("api-score-intervals", args=[campaign.slug]), {"width": "-1"})
    assert refused.status_code == 400 and "width" in refused.json()
    text = client.get(reverse("exports:scores_csv", args=[campaign.slug])).content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["generator"] for r in rows] == ["model-a", "model-b"]
    assert float(rows[0]["ppi_low"]) <= float(rows[0]["ppi_mean"]) <= float(rows[0]["ppi_high"])


def test_a_campaign_without_judgements_fits_nothing():
    campaign = CampaignFactory(scale="0-7")
    ItemFactory(campaign=campaign)
    assert campaign_rater_model_fit(campaign_id=campaign.pk) is None
    assert not RaterModelFit.objects.exists()


def test_the_command_fits_named_campaigns_and_names_a_missing_one(campaign):
    out = io.StringIO()
    call_command("fit_rater_model", campaign=[campaign.slug], stdout=out)
    assert "104 judgements of 40 items by 3 raters (6 known)" in out.getvalue()
    assert (
        FinalLabel.objects.filter(item__campaign=campaign, confidence__isnull=False).count() == 24
    )
    with pytest.raises(CommandError, match="--campaign: no campaign nowhere"):
        call_command("fit_rater_model", campaign=["nowhere"])


def test_a_label_changed_while_the_model_was_fitted_keeps_its_confidence_stale(campaign):
    label = FinalLabel.objects.filter(item__campaign=campaign).first()
    FinalLabel.objects.filter(pk=label.pk).update(confidence=0.5)
    stale = Decimal(1) - label.value  # what the fit read before an adjudicator changed it
    rater_model_store(
        campaign_id=campaign.pk,
        classes=["0", "0.5", "1"],
        priors=[0.5, 0, 0.5],
        raters=[],
        items=40,
        gold=0,
        judgements=0,
        iterations=1,
        confidences={label.item_id: (stale, 0.9)},
    )
    kept = FinalLabel.objects.get(pk=label.pk)
    fit = RaterModelFit.objects.get(campaign=campaign)
    assert kept.confidence == 0.5 and kept.updated_at > fit.fitted_at  # shown stale


def test_the_exports_carry_each_labels_confidence(campaign, tmp_path):
    """dv (one row an item) and annotations (one row a judgement) carry the fitted confidence of
    the item's final label, so a researcher can filter or weight on it without a join."""
    import json

    from exports.formats import ExportOptions
    from exports.services import dataset_write

    campaign_rater_model_fit(campaign_id=campaign.pk)
    stored = dict(
        FinalLabel.objects.filter(item__campaign=campaign).values_list("item_id", "confidence")
    )
    for fmt in ("dv", "annotations"):
        out = tmp_path / f"{fmt}.jsonl"
        dataset_write(
            campaign=campaign, fmt=fmt, file_type="jsonl", options=ExportOptions(), out=out
        )
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        labelled = [r for r in rows if r["item_id"] in stored]
        assert labelled, fmt
        assert all(r["label_confidence"] == pytest.approx(stored[r["item_id"]]) for r in labelled)


def test_the_fit_chooses_its_model_by_held_out_calibration_and_measures_it(client, api_client_for):
    """A 0-7 campaign double-scored on 40% of its proofs: the fit records the model chosen,
    each candidate's held-out score, and the calibration on the held-out cases; the agreement
    page draws the reliability diagram and states the error with its interval; the API too."""
    from tests.estimation.factories import simulated_campaign

    campaign = simulated_campaign(labels=110, experts=3, seed=2)
    fit = campaign_rater_model_fit(campaign_id=campaign.pk)
    assert set(fit.heldout_scores) == {
        "dawid-skene",
        "one-coin",
        "ordinal",
        "ordinal-shrunk",
        "dawid-skene-pooled",
    }
    assert fit.model == min(fit.heldout_scores, key=fit.heldout_scores.get)
    assert 0.5 <= fit.temperature <= 6  # fitted on the held-out cases: softening or sharpening
    c = fit.calibration
    assert c["enough"] and c["cases"] == c["gold_cases"] + c["judgement_cases"] >= 30
    assert c["ece_low"] <= c["ece"] <= c["ece_high"]
    assert sum(row["n"] for row in c["rows"]) == c["cases"]
    labels = FinalLabel.objects.filter(item__campaign=campaign)
    assert not labels.filter(confidence__isnull=True).exists()
    # a single judgement is not stated as certain
    singles = labels.filter(source="single")
    assert singles.exists() and max(singles.values_list("confidence", flat=True)) < 0.99

    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    page = client.get(reverse("adjudication:dashboard", args=[campaign.slug])).content.decode()
    assert 'id="reliability"' in page and 'class="chart reliability"' in page
    assert "Expected calibration error" in page and "Too little evidence" not in page
    assert "chosen by held-out log loss among 5 candidates" in page
    body = api_client_for(admin).get(reverse("api-campaign-agreement", args=[campaign.slug])).json()
    model = body["rater_model"]
    assert model["model"] == fit.model and model["heldout_scores"] == fit.heldout_scores
    assert model["calibration"]["enough"] is True
    assert model["calibration"]["ece"] == pytest.approx(c["ece"])
    assert len(model["calibration"]["rows"]) == len(c["rows"])


def test_too_little_evidence_is_said_in_words(campaign, client, api_client_for):
    """One expert, six gold items: six held-out cases, no calibration error stated."""
    fit = campaign_rater_model_fit(campaign_id=campaign.pk)
    assert fit.calibration["cases"] == 6 and not fit.calibration["enough"]
    assert fit.calibration["ece"] is None and fit.temperature == 1.0
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    page = client.get(reverse("adjudication:dashboard", args=[campaign.slug])).content.decode()
    assert "Too little evidence to state a calibration error: 6 held-out cases" in page
    assert "Expected calibration error" not in page
    body = api_client_for(admin).get(reverse("api-campaign-agreement", args=[campaign.slug])).json()
    calibration = body["rater_model"]["calibration"]
    assert calibration["enough"] is False and calibration["ece"] is None
    assert calibration["minimum"] == 30


def test_a_fit_made_before_calibration_was_measured_says_so(campaign, client):
    rater_model_store(
        campaign_id=campaign.pk,
        classes=["0", "0.5", "1"],
        priors=[0.5, 0, 0.5],
        raters=[],
        items=40,
        gold=0,
        judgements=0,
        iterations=1,
        confidences={},
    )
    client.force_login(UserFactory(roles=["admin"]))
    page = client.get(reverse("adjudication:dashboard", args=[campaign.slug])).content.decode()
    assert "made before calibration was measured" in page


def test_the_automatic_posteriors_routing_reads_are_tempered_as_the_labels_are(campaign):
    """Routing and adaptive double-scoring read a proof's posterior from its automatic
    judgements alone; a fit that softened (or sharpened) its posteriors by a temperature
    softens these too, so routing reads the same confidence the labels state."""
    import numpy as np

    from estimation.services.confidence import automatic_posteriors

    campaign_rater_model_fit(campaign_id=campaign.pk)
    proof_ids = list(Item.objects.filter(campaign=campaign).values_list("proof_id", flat=True))
    RaterModelFit.objects.filter(campaign=campaign).update(temperature=1.0)
    plain = automatic_posteriors(campaign, proof_ids)
    assert plain
    RaterModelFit.objects.filter(campaign=campaign).update(temperature=2.0)
    soft = automatic_posteriors(campaign, proof_ids)
    assert soft.keys() == plain.keys()
    for proof_id, found in plain.items():
        expected = np.sqrt(np.clip(found.posterior, 1e-10, None))  # posterior^(1/2), normalised
        expected /= expected.sum()
        np.testing.assert_allclose(soft[proof_id].posterior, expected, atol=1e-9)
        assert soft[proof_id].verifier_class == found.verifier_class
    sharp = plain[next(iter(plain))].posterior
    assert max(soft[next(iter(plain))].posterior) <= max(sharp) + 1e-12


def test_confidences_too_few_cases_back_are_marked_unchecked_on_pages_api_and_card(
    campaign, client, api_client_for, tmp_path
):
    """Six held-out cases cannot measure a calibration: the agreement, labels and case pages,
    the API and the export's manifest and card state the caveat beside the confidences; once
    enough cases back them, none of them does."""
    import json

    from exports.formats import ExportOptions
    from exports.services import dataset_write
    from exports.services.datasets import companion_paths

    campaign_rater_model_fit(campaign_id=campaign.pk)
    fit = RaterModelFit.objects.get(campaign=campaign)
    assert not fit.calibration["enough"] and fit.calibration["cases"] == 6
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    agreement = reverse("adjudication:dashboard", args=[campaign.slug])
    labels = reverse("adjudication:labels", args=[campaign.slug])
    for url in (agreement, labels):
        page = client.get(url).content.decode()
        assert 'id="confidence-caveat"' in page and "Unchecked: 6 held-out cases" in page
        assert ">unchecked</span>" in page
    body = api_client_for(admin).get(reverse("api-campaign-agreement", args=[campaign.slug]))
    model = body.json()["rater_model"]
    assert model["confidence_checked"] is False
    assert "not as probabilities" in model["confidence_caveat"]
    out = tmp_path / "dv.jsonl"
    manifest = dataset_write(
        campaign=campaign, fmt="dv", file_type="jsonl", options=ExportOptions(), out=out
    )
    found = manifest["label_confidence"]
    assert found["checked"] is False and found["heldout_cases"] == 6 and found["ece"] is None
    manifest_path, card_path = companion_paths(out)
    assert json.loads(manifest_path.read_text())["label_confidence"]["caveat"] == found["caveat"]
    card = card_path.read_text()
    assert "## Label confidence" in card and "**Unchecked: 6 held-out cases" in card

    # enough held-out cases (as a larger campaign has): checked, and no caveat anywhere
    calibration = dict(fit.calibration, enough=True, cases=40, ece=0.031, ece_low=0.01)
    RaterModelFit.objects.filter(pk=fit.pk).update(calibration=dict(calibration, ece_high=0.06))
    for url in (agreement, labels):
        page = client.get(url).content.decode()
        assert 'id="confidence-caveat"' not in page and ">unchecked</span>" not in page
    body = api_client_for(admin).get(reverse("api-campaign-agreement", args=[campaign.slug]))
    assert body.json()["rater_model"]["confidence_checked"] is True
    dataset_write(campaign=campaign, fmt="dv", file_type="jsonl", options=ExportOptions(), out=out)
    card = companion_paths(out)[1].read_text()
    assert "Expected calibration error 0.031 [0.010, 0.060]" in card and "Unchecked" not in card
