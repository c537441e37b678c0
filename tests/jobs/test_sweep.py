"""The jobs sweep and a job's run, in-process: a job whose worker stopped is queued again (or,
after its last attempt, failed with the reason and its partial output removed); live, finished
and still-queued jobs are left alone; a second copy of a message never runs a live job twice."""

from datetime import timedelta
from pathlib import Path

import pytest
from celery.exceptions import Retry
from django.conf import settings
from django.db.models import F
from django.utils import timezone

from exports.formats import base
from exports.models import ExportJob
from exports.services import export_run
from jobs.kinds import KINDS
from jobs.services import job_run, jobs_sweep
from rubrics.models import GenerationTask
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory
from tests.rubrics.generation_factories import LLMEndpointFactory, problem_with_solutions

pytestmark = pytest.mark.django_db


@pytest.fixture
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def export_of(corpus, *, status, silent_minutes, attempts=1) -> ExportJob:
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
    """What a killed worker may leave: the files of its attempt it stored before it died."""
    folder = Path(media) / "exports" / str(job.pk)
    (folder / "1").mkdir(parents=True)
    (folder / "1" / "golden-pilot-dv.csv").write_text("problem_id,problem\n")
    return folder


def test_every_job_kind_is_registered_with_its_task():
    from config.celery import app

    app.loader.import_default_modules()
    assert set(KINDS) == {
        "import",
        "scheme_generation",
        "verifier_run",
        "labelling",
        "grader_evaluation",
        "grader_grid",
        "grader_picks",
        "export",
        "rater_model_refit",
        "webhook_delivery",
    }
    assert all(kind.task in app.tasks for kind in KINDS.values())
    assert "jobs.sweep" in app.tasks


def test_beat_sends_the_sweep_within_the_documented_bound():
    schedule = settings.CELERY_BEAT_SCHEDULE["jobs-sweep"]
    assert schedule["task"] == "jobs.sweep"
    assert settings.CELERY_TASK_ROUTES["jobs.sweep"]["queue"].endswith(".sweep")
    assert settings.JOB_HEARTBEAT_SECONDS < settings.JOB_STALE_SECONDS
    assert settings.JOB_STALE_SECONDS + schedule["schedule"] <= 5 * 60


def test_a_job_whose_worker_died_is_queued_again_and_completes(
    media, django_capture_on_commit_callbacks
):
    corpus = labelled_campaign()
    job = export_of(corpus, status="running", silent_minutes=30)
    folder = leftovers(media, job)

    with django_capture_on_commit_callbacks() as queued:
        sweep = jobs_sweep(queued=3)  # a running job is queued again even behind others
    assert (sweep.requeued, sweep.failed) == ([("export", job.pk)], [])
    assert len(queued) == 1
    job.refresh_from_db()
    assert job.status == "pending" and job.heartbeat_at > timezone.now() - timedelta(minutes=1)
    assert not folder.exists()  # nothing of the dead run shows

    assert job_run("export", job.pk, lambda: export_run(job_id=job.pk))
    job.refresh_from_db()
    assert job.status == "succeeded" and job.attempts == 2 and job.error == ""
    assert (Path(media) / job.file).read_text().startswith("problem_id,problem,proof,")


def test_a_job_that_keeps_dying_fails_with_the_reason_and_leaves_no_file(media):
    corpus = labelled_campaign()
    job = export_of(corpus, status="running", silent_minutes=30, attempts=3)
    folder = leftovers(media, job)

    sweep = jobs_sweep(max_attempts=3, queued=0)
    assert (sweep.requeued, sweep.failed) == ([], [("export", job.pk)])
    job.refresh_from_db()
    assert job.status == "failed" and job.file == ""
    assert job.error.startswith("its worker stopped (no sign of it since ")
    assert job.error.endswith("given up after 3 attempts")
    assert not folder.exists()


def test_the_sweep_leaves_live_finished_and_queued_jobs_alone_and_repeats_safely(
    media, django_capture_on_commit_callbacks
):
    corpus = labelled_campaign()
    live = export_of(corpus, status="running", silent_minutes=1)
    done = export_of(corpus, status="failed", silent_minutes=60)
    waiting = export_of(corpus, status="pending", silent_minutes=1, attempts=0)
    lost = export_of(corpus, status="pending", silent_minutes=45, attempts=0)

    with django_capture_on_commit_callbacks() as queued:
        behind_others = jobs_sweep(queued=2)  # its message may still be in the queue
        first = jobs_sweep(queued=0)
        second = jobs_sweep(queued=0)
    assert behind_others.requeued == []
    assert (first.requeued, first.failed) == ([("export", lost.pk)], [])
    assert (second.requeued, second.failed) == ([], [])
    assert len(queued) == 1
    states = dict(ExportJob.objects.values_list("pk", "status"))
    assert states == {
        live.pk: "running",
        done.pk: "failed",
        waiting.pk: "pending",
        lost.pk: "pending",
    }


def test_a_second_copy_of_the_message_leaves_a_live_or_finished_job_alone(media):
    corpus = labelled_campaign()
    live = export_of(corpus, status="running", silent_minutes=1)
    done = export_of(corpus, status="failed", silent_minutes=60)
    ran = []
    assert not job_run("export", live.pk, lambda: ran.append(live.pk))
    assert not job_run("export", done.pk, lambda: ran.append(done.pk))
    assert ran == []
    assert ExportJob.objects.get(pk=live.pk).attempts == 1


def test_a_run_that_was_taken_over_does_not_write_to_the_row(media, monkeypatch):
    corpus = labelled_campaign()
    job = export_of(corpus, status="running", silent_minutes=0, attempts=1)  # as claimed
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


def test_a_job_waiting_for_its_retry_is_left_alone_until_it_is_due():
    from rubrics import generation

    admin = UserFactory(roles=["admin"])
    endpoint = LLMEndpointFactory()
    config = generation.generator_config_get_or_create(
        method="proofbench", prompt_version="v1", endpoint=endpoint, user=admin
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(generation, "job_send_on_commit", lambda *args, **kwargs: None)
        run = generation.generation_run_start(
            config=config, problems=[problem_with_solutions()], user=admin
        )
    task = run.tasks.get()

    def body():
        GenerationTask.objects.filter(pk=task.pk).update(status="running")
        raise Retry(when=600)

    with pytest.raises(Retry):
        job_run("scheme_generation", task.pk, body)
    task.refresh_from_db()
    assert task.status == "retrying"
    assert task.heartbeat_at > timezone.now() + timedelta(minutes=9)
    assert jobs_sweep(queued=0).requeued == []


def test_the_command_runs_the_sweep_once(media, capsys, django_capture_on_commit_callbacks):
    from django.core.management import call_command

    corpus = labelled_campaign()
    stuck = export_of(corpus, status="running", silent_minutes=30)
    with django_capture_on_commit_callbacks(execute=False):
        call_command("sweep_jobs")
    assert f"queued again: [('export', {stuck.pk})]" in capsys.readouterr().out
    assert ExportJob.objects.get(pk=stuck.pk).status == "pending"
