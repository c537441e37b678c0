"""Export jobs whose worker died: the sweep queues them again (or, after the last attempt, fails
them with the reason and removes their files), leaves live and finished jobs alone, and a run
that was taken over never writes to the row."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from exports.formats import base
from exports.models import ExportJob
from exports.services import export_jobs_requeue_stale, export_run
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def job_of(corpus, *, status, silent_minutes, attempts=1) -> ExportJob:
    return ExportJob.objects.create(
        campaign=corpus.campaign,
        format="dv",
        file_type="csv",
        created_by=UserFactory(roles=["researcher"]),
        status=status,
        attempts=attempts,
        heartbeat_at=timezone.now() - timedelta(minutes=silent_minutes),
    )


def leftovers(media, job) -> Path:
    """What a worker killed while storing its files may leave: its data file, in the folder of
    its attempt (a new attempt writes to a folder of its own)."""
    folder = Path(media) / "exports" / str(job.pk)
    (folder / str(job.attempts)).mkdir(parents=True)
    (folder / str(job.attempts) / "golden-pilot-dv.csv").write_text("problem_id,problem\n")
    return folder


def test_a_job_whose_worker_died_is_queued_again_and_completes(
    media, django_capture_on_commit_callbacks
):
    corpus = labelled_campaign()
    job = job_of(corpus, status="running", silent_minutes=30)
    leftovers(media, job)

    with django_capture_on_commit_callbacks() as queued:
        sweep = export_jobs_requeue_stale()
    assert (sweep.requeued, sweep.failed) == ([job.pk], [])
    assert len(queued) == 1
    job.refresh_from_db()
    assert job.status == "pending" and job.error.startswith("Queued again: its worker stopped")
    job = export_run(job_id=job.pk)
    assert job.status == "succeeded" and job.attempts == 2 and job.error == ""
    assert job.file == f"exports/{job.pk}/2/golden-pilot-dv.csv"
    assert (Path(media) / job.file).read_text().startswith("problem_id,problem,proof,")


def test_a_job_that_keeps_dying_fails_with_the_reason_and_leaves_no_file(media):
    corpus = labelled_campaign()
    job = job_of(corpus, status="running", silent_minutes=30, attempts=3)
    folder = leftovers(media, job)

    sweep = export_jobs_requeue_stale(max_attempts=3)
    assert (sweep.requeued, sweep.failed) == ([], [job.pk])
    job.refresh_from_db()
    assert job.status == "failed" and job.file == ""
    assert job.error.startswith("its worker stopped (no sign of it since ")
    assert job.error.endswith(", 3 times")
    assert not [p for p in folder.rglob("*") if p.is_file()]


def test_the_sweep_leaves_live_finished_and_recent_jobs_alone_and_repeats_safely(
    media, django_capture_on_commit_callbacks
):
    corpus = labelled_campaign()
    live = job_of(corpus, status="running", silent_minutes=1)
    done = job_of(corpus, status="failed", silent_minutes=60)
    waiting = job_of(corpus, status="pending", silent_minutes=2, attempts=0)
    lost = job_of(corpus, status="pending", silent_minutes=45, attempts=0)

    with django_capture_on_commit_callbacks() as queued:
        first = export_jobs_requeue_stale()
        second = export_jobs_requeue_stale()
    assert (first.requeued, first.failed) == ([lost.pk], [])
    assert (second.requeued, second.failed) == ([], [])
    assert len(queued) == 1
    states = dict(ExportJob.objects.values_list("pk", "status"))
    assert states == {
        live.pk: "running",
        done.pk: "failed",
        waiting.pk: "pending",
        lost.pk: "pending",
    }
    assert ExportJob.objects.get(pk=lost.pk).error == ""


def test_a_run_leaves_a_job_alone_while_its_worker_is_alive(media):
    corpus = labelled_campaign()
    job = job_of(corpus, status="running", silent_minutes=1)
    after = export_run(job_id=job.pk)
    assert (after.status, after.attempts, after.file) == ("running", 1, "")


def test_a_run_that_was_taken_over_does_not_write_to_the_row(media, monkeypatch):
    corpus = labelled_campaign()
    job = job_of(corpus, status="pending", silent_minutes=0, attempts=0)
    real = base.first_references

    def taken_over(problem_ids):
        # Meanwhile the sweep thought this run dead and a second run took the job.
        ExportJob.objects.filter(pk=job.pk).update(attempts=F("attempts") + 1)
        return real(problem_ids)

    monkeypatch.setattr(base, "first_references", taken_over)
    job.format = "proofbench"
    job.save(update_fields=["format"])
    after = export_run(job_id=job.pk)
    assert (after.status, after.attempts, after.file, after.manifest) == ("running", 2, "", {})


def test_the_exports_page_and_the_command_sweep(media, client, django_capture_on_commit_callbacks):
    corpus = labelled_campaign()
    stuck = job_of(corpus, status="running", silent_minutes=30)
    gone = job_of(corpus, status="running", silent_minutes=30, attempts=3)
    client.force_login(UserFactory(roles=["researcher"]))

    with django_capture_on_commit_callbacks(execute=False):
        page = client.get(reverse("exports:detail", args=[stuck.pk]))
    assert "Queued again: its worker stopped" in page.content.decode()
    assert ExportJob.objects.get(pk=gone.pk).status == "failed"

    ExportJob.objects.filter(pk=stuck.pk).update(
        status="running", heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    with django_capture_on_commit_callbacks(execute=False):
        call_command("requeue_stale_exports", minutes=20)
    assert ExportJob.objects.get(pk=stuck.pk).status == "pending"
