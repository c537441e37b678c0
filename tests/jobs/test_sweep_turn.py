"""Recovery without a single scheduler: every beat sends the sweep, the database decides which
message sweeps in a period, and killing one beat leaves the others to recover a killed job."""

import json
import os
import signal
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from jobs.models import SweepTurn
from jobs.services import sweep_turn_take
from problems.models import ImportJob
from tests.conftest import celery_process, wait_for
from tests.problems.import_files import proofbench_row
from tests.rubrics.test_concurrency import run_together


@pytest.mark.django_db(transaction=True)
def test_one_caller_a_period_sweeps_however_many_beats_send_it():
    taken: list[bool] = []
    errors = run_together(lambda i: taken.append(sweep_turn_take(period=60)), 6)
    assert errors == [] and sorted(taken) == [False] * 5 + [True]
    assert sweep_turn_take(period=60) is False  # the same period
    SweepTurn.objects.update(swept_at=timezone.now() - timedelta(seconds=50))
    assert sweep_turn_take(period=60) is True  # 0.8 of a period later: the next turn
    assert sweep_turn_take(name="other", period=60) is True  # each sweep its own turn


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_killed_beat_leaves_the_other_to_recover_a_killed_import(tmp_path, settings):
    """An import whose worker died (running, its heartbeat stale), two beats and a worker: one
    beat is killed at once; the other's sweeps queue the import again and it finishes."""
    settings.MEDIA_ROOT = tmp_path / "media"
    rows = "".join(json.dumps(proofbench_row(index)) + "\n" for index in range(2))
    job = ImportJob(original_name="beats.jsonl", format="proofbench", total=len(rows))
    job.file.save("beats.jsonl", ContentFile(rows.encode()), save=False)
    job.status = ImportJob.Status.RUNNING
    job.attempts = 1
    job.heartbeat_at = timezone.now() - timedelta(hours=1)
    job.save()
    env = {
        "CELERY_BROKER_URL": os.environ["CELERY_BROKER_URL"],  # Redis: shared by the machines
        "CELERY_TASK_DEFAULT_QUEUE": f"proofmark-beats-{os.getpid()}",
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "JOB_SWEEP_SECONDS": "1",
        "JOB_STALE_SECONDS": "2",
    }
    processes = []
    with (tmp_path / "processes.log").open("w") as log:
        try:
            for name in ("beat", "beat", "worker"):
                # each its own run folder (a beat's schedule file), as on machines of their own
                own = {**env, "PROOFMARK_RUN_DIR": str(tmp_path / f"run-{len(processes)}")}
                processes.append(celery_process(name, env=own, log=log))
            processes[0].send_signal(signal.SIGKILL)
            processes[0].wait(timeout=10)
            wait_for(
                lambda: ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.SUCCEEDED,
                timeout=120,
                interval=0.5,
            )
        finally:
            for process in processes:
                if process.poll() is None:
                    process.terminate()
                    process.wait(timeout=20)
    assert ImportJob.objects.get(pk=job.pk).attempts == 2
    assert SweepTurn.objects.get(name="jobs").swept_at > job.heartbeat_at
