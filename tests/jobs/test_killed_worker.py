"""A worker killed with SIGKILL in the middle of every kind of job, on each broker: celery beat's
sweep queues the jobs again, a new worker completes them, and nothing is written twice.

Every job is held mid-run by a lock on the problems table (each kind reads or writes it after
taking its job), so the kill lands after the job started, whatever the machine's speed. The
jobs' first messages are dropped, as the filesystem broker drops a message a dead worker had
taken: the sweep (beat -> worker) sends them, and sends them again after the kill. The worker
and beat run on a queue of their own, apart from the session's worker."""

import json
import os
import signal
from datetime import timedelta
from decimal import Decimal

import psycopg
import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from adjudication import tasks as adjudication_tasks
from adjudication.models import FinalLabel, LabellingOutcome, VerifierRun
from adjudication.verification import labelling, verifier_runs
from exports import tasks as export_tasks
from exports.models import ExportJob
from exports.services import export_create
from graders import tasks as grader_tasks
from graders.models import GraderEvaluation, GraderPrediction
from graders.services.evaluations import evaluation_run_create
from jobs.kinds import KINDS
from problems import tasks as problem_tasks
from problems.models import ImportJob, Problem, VerifierAnalysis
from rubrics import generation
from rubrics import tasks as rubric_tasks
from rubrics.models import GenerationTask, MarkingScheme
from tests.annotation.factories import CampaignFactory
from tests.conftest import celery_process, wait_for, worker_database_url
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory
from tests.graders.test_evaluations import reply
from tests.llm import replies as scheme_replies
from tests.metaverify import replies
from tests.problems.import_files import proofbench_row
from tests.problems.page_factories import ProofFactory
from tests.rubrics.generation_factories import LLMEndpointFactory, problem_with_solutions

pytestmark = [pytest.mark.worker]

IMPORTED = 3


def start_jobs(fake_llm) -> dict[str, int]:
    """One job of each kind, committed; returns {kind: row id}."""
    admin = UserFactory(username="kill-admin", roles=["admin"])
    endpoint = LLMEndpointFactory(base_url=fake_llm.base_url, api_key_env="", timeout_seconds=60)
    meta = LLMEndpointFactory(base_url=fake_llm.base_url, api_key_env="", model="kill-meta")
    corpus = labelled_campaign()
    problem = problem_with_solutions()
    checked, looped = ProofFactory(text="Kill proof one."), ProofFactory(text="Kill proof two.")
    scheme_replies.script_proofbench(fake_llm)
    replies.script_proof(fake_llm, checked, replies.CLEAN)
    replies.script_proof(fake_llm, looped, replies.CLEAN)
    fake_llm.on("Grade the proof below", reply(5))

    rows = "".join(json.dumps(proofbench_row(index)) + "\n" for index in range(IMPORTED))
    upload = ImportJob(original_name="kill.jsonl", format="proofbench", total=len(rows))
    upload.file.save("kill.jsonl", ContentFile(rows.encode()), save=False)
    upload.save()
    config = generation.generator_config_get_or_create(
        method="proofbench", prompt_version="v1", endpoint=endpoint, user=admin
    )
    run = generation.generation_run_start(config=config, problems=[problem], user=admin)
    vrun = verifier_runs.verifier_run_start(
        kind="verify", endpoint=endpoint, targets=[checked], samples=2, user=admin
    )
    lrun = labelling.labelling_run_start(
        proofs=[looped],
        verifier=endpoint,
        meta_verifier=meta,
        n=1,
        m=1,
        k=1,
        route_campaign=CampaignFactory(scale="0-0.5-1"),
        user=admin,
    )
    evaluation = evaluation_run_create(
        user=admin, campaign=corpus.campaign, endpoint=endpoint, name="kill grader", runs=1
    )
    export = export_create(
        user=admin, campaign=corpus.campaign, fmt="dv", file_type="csv", filters={}
    )
    return {
        "import": upload.pk,
        "scheme_generation": run.tasks.get().pk,
        "verifier_run": vrun.pk,
        "labelling": lrun.outcomes.get().pk,
        "grader_evaluation": evaluation.pk,
        "export": export.pk,
    }


def states(jobs: dict[str, int]) -> dict[str, tuple[str, int]]:
    """{kind: (status, attempts)}, read without touching the locked problems table."""
    found = {}
    for name, pk in jobs.items():
        kind = KINDS[name]
        found[name] = tuple(
            kind.model.objects.filter(pk=pk).values_list(kind.status_field, "attempts").get()
        )
    return found


@pytest.fixture
def lost_messages(monkeypatch):
    """The jobs' first messages never reach a broker (as a dead worker's message on the
    filesystem broker): only the sweep sends them."""
    for task in (
        problem_tasks.import_run,
        rubric_tasks.generate_scheme,
        adjudication_tasks.verifier_run_job,
        adjudication_tasks.labelling_outcome_job,
        grader_tasks.evaluation_run_task,
        export_tasks.export_run_task,
    ):
        monkeypatch.setattr(task, "delay", lambda *args: None)


@pytest.mark.parametrize("broker", ["filesystem", "redis"])
def test_jobs_survive_a_worker_killed_mid_job(
    broker, transactional_db, fake_llm, lost_messages, tmp_path, settings
):
    redis_url = os.environ.get("CELERY_BROKER_URL", "")
    if broker == "redis" and not redis_url.startswith("redis://"):
        pytest.skip("CELERY_BROKER_URL is not a redis:// URL: run the suite with `make test`")
    settings.MEDIA_ROOT = tmp_path / "media"
    env = {
        "CELERY_BROKER_URL": redis_url if broker == "redis" else "filesystem://",
        "CELERY_TASK_DEFAULT_QUEUE": f"proofmark-killed-{broker}",
        "PROOFMARK_RUN_DIR": str(tmp_path / "run"),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "JOB_HEARTBEAT_SECONDS": "0.5",
        "JOB_STALE_SECONDS": "3",
        "JOB_SWEEP_SECONDS": "1",
    }
    if broker == "redis":
        import redis

        client = redis.Redis.from_url(redis_url)
        prefix = env["CELERY_TASK_DEFAULT_QUEUE"]
        client.delete(prefix, *(f"{prefix}.{kind}" for kind in settings.WORK_QUEUES))
    jobs = start_jobs(fake_llm)
    for kind in KINDS.values():  # their messages were lost long ago
        kind.model.objects.update(heartbeat_at=timezone.now() - timedelta(hours=1))

    lock = psycopg.connect(worker_database_url().replace("postgres://", "postgresql://"))
    lock.execute(f"LOCK TABLE {Problem._meta.db_table} IN ACCESS EXCLUSIVE MODE")
    logs = settings.RUN_DIR  # one per xdist worker (tests/suite.py)
    logs.mkdir(parents=True, exist_ok=True)
    with (
        (logs / f"test-killed-{broker}-worker.log").open("w") as worker_log,
        (logs / f"test-killed-{broker}-beat.log").open("w") as beat_log,
    ):
        beat = celery_process("beat", env=env, log=beat_log)
        worker = celery_process("worker", env=env, log=worker_log)
        try:
            wait_for(
                lambda: set(states(jobs).values()) == {("running", 1)}, timeout=90, interval=0.5
            )
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=10)
            lock.rollback()
            worker = celery_process("worker", env=env, log=worker_log)
            finished = wait_for(
                lambda: (
                    (found := states(jobs))
                    and all(status not in ("pending", "running") for status, _ in found.values())
                    and found
                ),
                timeout=120,
                interval=0.5,
            )
        finally:
            lock.close()
            for process in (worker, beat):
                process.terminate()
                process.wait(timeout=20)

    assert finished == {
        "import": ("succeeded", 2),
        "scheme_generation": ("succeeded", 2),
        "verifier_run": ("succeeded", 2),
        "labelling": ("succeeded", 2),
        "grader_evaluation": ("succeeded", 2),
        "export": ("succeeded", 2),
    }
    # Nothing written twice, nothing partial left.
    assert Problem.objects.filter(external_id__startswith="T-").count() == IMPORTED
    task = GenerationTask.objects.get(pk=jobs["scheme_generation"])
    assert MarkingScheme.objects.filter(problem=task.problem, method="proofbench").count() == 1
    vrun = VerifierRun.objects.get(pk=jobs["verifier_run"])
    assert vrun.done_count == 2
    assert VerifierAnalysis.objects.filter(sample_key__startswith=f"run{vrun.pk}-").count() == 2
    outcome = LabellingOutcome.objects.get(pk=jobs["labelling"])
    assert (outcome.decision, outcome.label) == ("labelled", Decimal("1"))
    assert FinalLabel.objects.filter(item__proof=outcome.proof).count() == 1
    evaluation = GraderEvaluation.objects.get(pk=jobs["grader_evaluation"])
    assert GraderPrediction.objects.filter(evaluation=evaluation).count() == evaluation.total
    export = ExportJob.objects.get(pk=jobs["export"])
    folder = settings.MEDIA_ROOT / "exports" / str(export.pk)
    assert not [p.name for p in folder.iterdir() if ".partial-" in p.name]
    assert (settings.MEDIA_ROOT / export.file).read_text().count("\n") == 1 + export.processed
