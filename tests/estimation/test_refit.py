"""Confidence always current (estimation.services.refit): a change of a label queues one
debounced refit of the campaign's rater model; a worker killed mid-fit leaves the old fit whole
and the sweep runs the refit again; an export refits a stale fit first; the pages say the fit's
age, and a label changed since the fit shows its confidence as stale."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from adjudication.models import FinalLabel
from adjudication.services.labels import final_label_set
from annotation.models import Item
from annotation.signals import judgement_submitted
from estimation import tasks
from estimation.models import RaterModelFit, RaterModelRefit
from estimation.selectors import freshness_words, rater_model_freshness
from estimation.services import confidence
from estimation.services.confidence import campaign_rater_model_fit
from estimation.services.refit import (
    rater_model_refit_request,
    rater_model_refit_run,
    rater_model_stale,
)
from exports.models import ExportJob
from exports.services import export_create, export_run
from jobs.models import JobStatus
from jobs.services import jobs_sweep, task_by_name
from tests.conftest import as_job
from tests.exports.factories import graded_by_experts_and_graders, labelled_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """The refit task's messages, recorded instead of sent: [(args, countdown)]."""
    found = []
    task = type(task_by_name("estimation.rater_model_refit"))  # a class of its own
    monkeypatch.setattr(
        task,
        "apply_async",
        lambda self, args, countdown=None, **kw: found.append((args, countdown)),
    )
    return found


def test_many_changes_in_a_window_queue_one_refit_sent_after_the_debounce(
    settings, sent, django_capture_on_commit_callbacks
):
    settings.RATER_MODEL_REFIT_DEBOUNCE_SECONDS = 7
    campaign = graded_by_experts_and_graders()
    items = list(Item.objects.filter(campaign=campaign).order_by("pk")[:3])
    with django_capture_on_commit_callbacks(execute=True):
        # an adjudication, an import, the loop: a label set; and a grade revised
        for item, source in zip(items, ("adjudication", "imported", "automatic"), strict=True):
            final_label_set(item=item, value=Decimal(1), source=source, policy="t", grade_ids=[])
        judgement_submitted.send(sender=None, item_id=items[0].pk, grade_id=0, revised=True)
    refit = RaterModelRefit.objects.get(campaign=campaign)
    assert (refit.status, refit.changes) == (JobStatus.PENDING, 4)
    assert sent == [((refit.pk,), 7)]  # one message, run 7 s after the first change
    assert not RaterModelFit.objects.filter(campaign=campaign).exists()  # nothing fitted here

    # once the refit runs, the next change queues the next one
    RaterModelRefit.objects.filter(pk=refit.pk).update(status=JobStatus.RUNNING)
    with django_capture_on_commit_callbacks(execute=True):
        assert rater_model_refit_request(campaign_id=campaign.pk) is not None
        assert rater_model_refit_request(campaign_id=campaign.pk) is None
    assert RaterModelRefit.objects.filter(campaign=campaign).count() == 2 and len(sent) == 2


def test_the_job_fits_and_a_second_copy_of_its_message_does_nothing(sent):
    campaign = graded_by_experts_and_graders()
    refit_id = rater_model_refit_request(campaign_id=campaign.pk)
    assert as_job("rater_model_refit", refit_id, lambda: rater_model_refit_run(refit_id=refit_id))
    refit = RaterModelRefit.objects.get(pk=refit_id)
    assert (refit.status, refit.attempts) == (JobStatus.SUCCEEDED, 1)
    assert not FinalLabel.objects.filter(item__campaign=campaign, confidence=None).exists()
    assert as_job("rater_model_refit", refit_id, lambda: 1 / 0) is None  # finished: not run
    assert not rater_model_stale(campaign_id=campaign.pk)


def test_a_refit_waits_while_another_of_its_campaign_runs(sent):
    campaign = graded_by_experts_and_graders()
    running = RaterModelRefit.objects.create(campaign=campaign, status=JobStatus.RUNNING)
    waiting = RaterModelRefit.objects.create(campaign=campaign)
    tasks.rater_model_refit_task.run(waiting.pk)
    waiting.refresh_from_db()
    assert (waiting.status, waiting.attempts) == (JobStatus.PENDING, 0)
    assert sent == [((waiting.pk,), pytest.approx(10))]  # sent again, for after the window
    RaterModelRefit.objects.filter(pk=running.pk).update(
        heartbeat_at=timezone.now() - timedelta(hours=1)
    )  # its worker died: no longer in the way
    tasks.rater_model_refit_task.run(waiting.pk)
    waiting.refresh_from_db()
    assert waiting.status == JobStatus.SUCCEEDED


class Killed(BaseException):
    """The worker's process dying mid-fit (not an Exception: nothing handles it)."""


def test_a_worker_killed_mid_fit_leaves_the_old_fit_and_the_sweep_runs_the_refit_again(
    monkeypatch, sent
):
    campaign = graded_by_experts_and_graders()
    old = campaign_rater_model_fit(campaign_id=campaign.pk)
    before = dict(
        FinalLabel.objects.filter(item__campaign=campaign).values_list("item_id", "confidence")
    )
    label = FinalLabel.objects.filter(item__campaign=campaign, source="single").first()
    final_label_set(item=label.item, value=1 - label.value, source="adjudication", policy="t",
                    grade_ids=[])  # fmt: skip
    refit_id = rater_model_refit_request(campaign_id=campaign.pk)

    real_set = confidence.label_confidences_set

    def dies_half_way(*, campaign_id, confidences):
        real_set(campaign_id=campaign_id, confidences=dict(list(confidences.items())[:5]))
        raise Killed  # the model row and five labels written, inside the fit's transaction

    monkeypatch.setattr(confidence, "label_confidences_set", dies_half_way)
    with pytest.raises(Killed):
        as_job("rater_model_refit", refit_id, lambda: rater_model_refit_run(refit_id=refit_id))
    # the old fit stays whole: its row and every label's confidence as they were
    kept = RaterModelFit.objects.get(campaign=campaign)
    assert kept.fitted_at == old.fitted_at and kept.raters == old.raters
    assert (
        dict(
            FinalLabel.objects.filter(item__campaign=campaign).values_list("item_id", "confidence")
        )
        == before
    )
    refit = RaterModelRefit.objects.get(pk=refit_id)
    assert (refit.status, refit.attempts) == (JobStatus.RUNNING, 1)
    assert rater_model_freshness(campaign)["state"] == "running"

    # its heartbeat goes stale; the sweep queues it again and the next worker fits
    monkeypatch.setattr(confidence, "label_confidences_set", real_set)
    RaterModelRefit.objects.filter(pk=refit_id).update(
        heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    sweep = jobs_sweep(queued=0)
    assert ("rater_model_refit", refit_id) in sweep.requeued
    assert RaterModelRefit.objects.get(pk=refit_id).status == JobStatus.PENDING
    as_job("rater_model_refit", refit_id, lambda: rater_model_refit_run(refit_id=refit_id))
    refit.refresh_from_db()
    assert (refit.status, refit.attempts) == (JobStatus.SUCCEEDED, 2)
    assert RaterModelFit.objects.get(campaign=campaign).fitted_at > old.fitted_at
    assert not rater_model_stale(campaign_id=campaign.pk)
    assert rater_model_freshness(campaign)["changes"] == 0


def test_an_export_refits_a_stale_fit_first_so_every_row_carries_its_confidence(
    tmp_path, settings, sent
):
    settings.MEDIA_ROOT = tmp_path / "media"
    corpus = labelled_campaign()
    campaign = corpus.campaign
    admin = UserFactory(username="refit-admin", roles=["admin"])
    waiting = rater_model_refit_request(campaign_id=campaign.pk)  # queued, not run yet
    assert rater_model_stale(campaign_id=campaign.pk)
    for fmt in ("proofbench", "dv"):
        job = export_create(user=admin, campaign=campaign, fmt=fmt, file_type="jsonl", filters={})
        as_job("export", job.pk, lambda job=job: export_run(job_id=job.pk))
        job = ExportJob.objects.get(pk=job.pk)
        assert job.status == JobStatus.SUCCEEDED, job.error
        rows = [json.loads(line) for line in (settings.MEDIA_ROOT / job.file).open()]
        assert rows and all(row["label_confidence"] is not None for row in rows), fmt
    # the export's fit took in the waiting refit's changes: its message will find it done
    assert RaterModelRefit.objects.get(pk=waiting).status == JobStatus.SUCCEEDED
    fitted = RaterModelFit.objects.get(campaign=campaign).fitted_at
    # a second export finds the fit current and does not fit again
    job = export_create(user=admin, campaign=campaign, fmt="dv", file_type="jsonl", filters={})
    as_job("export", job.pk, lambda: export_run(job_id=job.pk))
    assert RaterModelFit.objects.get(campaign=campaign).fitted_at == fitted


def test_a_label_changed_since_the_fit_keeps_its_confidence_shown_stale(client, sent):
    campaign = graded_by_experts_and_graders()
    campaign_rater_model_fit(campaign_id=campaign.pk)
    label = FinalLabel.objects.filter(item__campaign=campaign, source="single").first()
    final_label_set(item=label.item, value=label.value, source="adjudication", policy="t",
                    grade_ids=[])  # fmt: skip
    assert FinalLabel.objects.get(pk=label.pk).confidence == label.confidence  # kept, not none
    rater_model_refit_request(campaign_id=campaign.pk)
    admin = UserFactory(username="stale-admin", roles=["admin"])
    client.force_login(admin)
    page = client.get(f"/adjudication/campaigns/{campaign.slug}/labels/").content.decode()
    assert "fitted less than a minute ago, before the latest change; refit queued" in page
    assert page.count(">stale</span>") == 1
    page = client.get(f"/adjudication/campaigns/{campaign.slug}/agreement/").content.decode()
    assert "1 changed since the fit: confidence stale" in page
    assert "before the latest change; refit queued" in page


@pytest.mark.parametrize(
    ("age", "changes", "state", "words"),
    [
        (None, 0, None, "not fitted yet"),
        (None, 3, "queued", "not fitted yet; refit queued"),
        (30, 0, None, "fitted less than a minute ago"),
        (180, 2, "queued", "fitted 3 min ago, before the 2 latest changes; refit queued"),
        (7300, 1, "running", "fitted 2 h ago, before the latest change; refitting now"),
        (3 * 86400, 5, "failed", "fitted 3 days ago, before the 5 latest changes; the last refit failed"),
    ],
)  # fmt: skip
def test_the_fits_age_in_words(age, changes, state, words):
    now = timezone.now()
    fitted = None if age is None else now - timedelta(seconds=age)
    assert freshness_words(fitted_at=fitted, changes=changes, state=state, now=now) == words


@pytest.mark.django_db(transaction=True)
def test_the_demos_proofbench_and_dv_exports_carry_a_confidence_on_every_row(tmp_path, sent):
    """`make run`'s demo: its grades and adjudication queued a refit (no worker ran it); the
    export refits first, so every row carries `label_confidence` (it was 0 of 7 before)."""
    from io import StringIO

    from django.core.management import call_command

    from annotation.demo import GRADING_SLUG

    call_command("demo_setup", allow_without_debug=True, stdout=StringIO())
    assert sent  # the demo's changes queued a refit
    for fmt in ("proofbench", "dv"):
        out = tmp_path / f"{fmt}.jsonl"
        call_command(
            "export_dataset", campaign=GRADING_SLUG, format=fmt, file_type="jsonl", out=out,
            stdout=StringIO(),
        )  # fmt: skip
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(rows) == 7 and all(r["label_confidence"] is not None for r in rows), fmt
