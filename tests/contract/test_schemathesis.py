"""The API contract, fuzzed: schemathesis sends generated requests, valid and invalid, to every
operation of the schema the app serves (ids past the largest key match no URL), as an admin and
as an expert. No answer
may be a server error or differ from what the schema documents (status code, content type,
headers, body). Rules the schema cannot state (a user or endpoint that must exist) are not
checked as schemathesis's `positive_data_acceptance` would.

Bounded: PROOFMARK_FUZZ_EXAMPLES examples per operation and generation mode (default 6), no
deadline (the machine is shared), derandomized so that a run is repeatable. The nightly run
(marker `nightly`, `make nightly`; left out of every other run) sends NIGHTLY_EXAMPLES (50) per
operation and mode as each of the four roles.
"""

import os

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.factories import UserFactory

EXAMPLES = int(os.environ.get("PROOFMARK_FUZZ_EXAMPLES", "6"))
NIGHTLY_EXAMPLES = 50
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
    )


@pytest.fixture
def wsgi_app(request, settings, tmp_path):
    """The app's WSGI application, in the test's transaction (as Django's test client does, a
    request must not close the test's database connection)."""
    settings.MEDIA_ROOT = tmp_path
    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
        request.addfinalizer(lambda signal=signal: signal.connect(close_old_connections))
    return get_wsgi_application()


def _fuzz(operation, mode: GenerationMode, examples: int) -> str | None:
    """None when every example passed; otherwise the first failure, as schemathesis says it."""

    @given(case=operation.as_strategy(generation_mode=mode))
    @fuzz_settings(examples)
    def run(case):
        case.call_and_validate(checks=CHECKS)

    try:
        run()
    except Unsatisfiable:  # no invalid value exists (a path parameter that takes any text)
        return None
    except (Exception, BaseExceptionGroup) as exc:  # each failure is reported with its operation
        return f"{operation.label} [{mode}]: {exc}"
    return None


def _contract_failures(role: str, wsgi_app, examples: int) -> list[str]:
    campaign = CampaignFactory(slug="contract")
    expert = expert_in(campaign, username="fuzz-expert")
    for _ in range(3):
        ItemFactory(campaign=campaign)
    user = expert if role == "expert" else UserFactory(roles=[role])
    token, _ = Token.objects.get_or_create(user=user)
    headers = {"Authorization": f"Token {token.key}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app, headers=headers)
    schema.config.headers = headers

    failures = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 30
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            failure = _fuzz(operation, mode, examples)
            if failure:
                failures.append(failure)
    return failures


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["admin", "expert"])
def test_api_contract(role, wsgi_app):
    failures = _contract_failures(role, wsgi_app, EXAMPLES)
    assert not failures, "\n\n".join(failures)


@pytest.mark.nightly
@pytest.mark.timeout(0)  # hours, not minutes: no per-test limit
@pytest.mark.django_db
@pytest.mark.parametrize("role", ["admin", "expert", "adjudicator", "researcher"])
def test_api_contract_nightly(role, wsgi_app):
    failures = _contract_failures(role, wsgi_app, NIGHTLY_EXAMPLES)
    assert not failures, "\n\n".join(failures)
