"""Factories for scheme generation: endpoints (pointed at the fake server by the tests),
configurations, problems with reference solutions."""

import factory

from rubrics.models import GeneratorConfig, LLMEndpoint
from tests.llm import replies
from tests.problems.page_factories import ProblemFactory, ReferenceSolutionFactory, sha256


class LLMEndpointFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = LLMEndpoint

    name = factory.Sequence(lambda n: f"endpoint-{n}")
    base_url = "http://127.0.0.1:9/v1"
    model = "fake-model"
    api_key_env = "PROOFMARK_TEST_LLM_KEY"
    temperature = 0.0
    max_tokens = 4096
    timeout_seconds = 5
    concurrency = 2
    max_attempts = 2


class GeneratorConfigFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GeneratorConfig

    name = factory.Sequence(lambda n: f"config-{n}")
    method = "proofbench"
    prompt_version = "v1"
    endpoint = factory.SubFactory(LLMEndpointFactory)


def problem_with_solutions(*texts: str, **fields):
    """A problem with the given reference solutions (default: the three of tests.llm.replies)."""
    problem = ProblemFactory(**fields)
    for text in texts or (replies.SOLUTION_A, replies.SOLUTION_B, replies.SOLUTION_A2):
        ReferenceSolutionFactory(problem=problem, text=text, text_hash=sha256(text))
    return problem
