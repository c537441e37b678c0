"""A generation run through the real path: committed run -> jobs on Redis -> the Celery worker
process -> the fake server (reached through the endpoint row's base URL) -> scheme versions."""

import pytest

from rubrics import generation
from rubrics.models import GenerationRun, GenerationStep, JobStatus
from tests.conftest import wait_for
from tests.factories import UserFactory
from tests.llm import replies
from tests.rubrics.generation_factories import LLMEndpointFactory, problem_with_solutions

pytestmark = [pytest.mark.worker]


def test_refgrader_run_through_the_celery_worker(transactional_db, celery_worker_process, fake_llm):
    admin = UserFactory(username="gen-admin", roles=["admin"])
    replies.script_refgrader(fake_llm, "milestones")
    replies.script_proofbench(fake_llm)
    endpoint = LLMEndpointFactory(base_url=fake_llm.base_url, api_key_env="")
    problems = [problem_with_solutions(), problem_with_solutions(replies.SOLUTION_B)]
    config = generation.generator_config_get_or_create(
        method="refgrader_milestones", prompt_version="v1", endpoint=endpoint, user=admin
    )
    run = generation.generation_run_start(config=config, problems=problems, user=admin)

    finished = wait_for(
        lambda: GenerationRun.objects.filter(pk=run.pk, finished_at__isnull=False).first(),
        timeout=90,
    )
    tasks = list(finished.tasks.order_by("id"))
    assert finished.status == JobStatus.SUCCEEDED, [t.error for t in tasks]
    assert [t.status for t in tasks] == [JobStatus.SUCCEEDED, JobStatus.SUCCEEDED]
    assert all(t.scheme.is_valid and t.scheme.method == "refgrader_milestones" for t in tasks)
    assert finished.prompt_tokens > 0
    # problem 1: cluster + 2 analyses + 2 rubrics; problem 2 (one solution): no clustering
    # call, 1 analysis + 1 rubric
    assert len(fake_llm.log) == 5 + 2
    assert GenerationStep.objects.count() == 7
