"""The schemes API: list, read a version, list a problem's versions; every role reads."""

import pytest
from django.urls import reverse

from rubrics.models import SchemeMethod
from rubrics.services import scheme_approve, scheme_edit, scheme_rate, scheme_version_create
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory
from tests.rubrics.factories import VALID_SCHEME

pytestmark = pytest.mark.django_db

INVALID_SCHEME = "## Checkpoints\n- (9 pts) **Everything**: all of it. [additive]\n"


@pytest.fixture
def schemes(admin_user, expert_user, expert2_user):
    first = scheme_version_create(
        problem=ProblemFactory(external_id="P-1"),
        text=VALID_SCHEME,
        method=SchemeMethod.PROOFBENCH,
        provenance={"model": "m", "prompt_version": "pb-v1"},
    )
    scheme_rate(scheme=first, rater=expert_user, score=3)
    scheme_rate(scheme=first, rater=expert2_user, score=1)
    second = scheme_edit(scheme=first, text=VALID_SCHEME + "\n", user=admin_user)
    scheme_approve(scheme=second, user=admin_user)
    other = scheme_version_create(
        problem=ProblemFactory(external_id="P-2"), text=INVALID_SCHEME, method=SchemeMethod.MANUAL
    )
    return first, second, other


def test_list_gives_the_latest_version_per_problem_with_filters(
    api_client_for, researcher_user, schemes
):
    first, second, other = schemes
    client = api_client_for(researcher_user)
    data = client.get(reverse("api-scheme-list")).json()
    assert data["count"] == 2
    rows = {row["problem"]: row for row in data["results"]}
    assert rows["P-1"]["id"] == second.pk and rows["P-1"]["version_count"] == 2
    assert rows["P-1"]["approved_version"] == 2 and rows["P-1"]["status"] == "approved"
    assert rows["P-2"]["is_valid"] is False
    valid_only = client.get(reverse("api-scheme-list"), {"valid": "false"}).json()
    assert [row["problem"] for row in valid_only["results"]] == ["P-2"]
    assert client.get(reverse("api-scheme-list"), {"status": "approved"}).json()["count"] == 1


def test_list_refuses_an_unknown_filter_value_by_name(api_client_for, researcher_user):
    response = api_client_for(researcher_user).get(reverse("api-scheme-list"), {"status": "x"})
    assert response.status_code == 400 and "status" in response.json()


def test_read_a_version_with_structure_validation_and_ratings(
    api_client_for, researcher_user, expert_user, schemes
):
    first, _, other = schemes
    client = api_client_for(researcher_user)
    data = client.get(reverse("api-scheme-detail", args=[first.pk])).json()
    assert data["text"] == VALID_SCHEME
    assert data["structure"]["chains"][0]["items"][0]["points"] == "3"
    assert data["chain_totals"] == {"A": "7"}
    assert data["ratings"] == {"count": 2, "mean": 2.0, "at_least_2": 1}
    assert data["provenance"]["prompt_version"] == "pb-v1"
    as_expert = api_client_for(expert_user).get(reverse("api-scheme-detail", args=[first.pk]))
    assert as_expert.json()["ratings"] is None
    invalid = client.get(reverse("api-scheme-detail", args=[other.pk])).json()
    assert invalid["is_valid"] is False
    assert invalid["validation"][0]["level"] == "error" and "7" in invalid["validation"][0]["text"]


def test_versions_of_a_problem_newest_first(
    api_client_for, adjudicator_user, schemes, django_assert_max_num_queries
):
    first, second, _ = schemes
    client = api_client_for(adjudicator_user)
    with django_assert_max_num_queries(8):
        data = client.get(reverse("api-problem-scheme-versions", args=["P-1"])).json()
    assert [(row["id"], row["version"], row["previous_id"]) for row in data["results"]] == [
        (second.pk, 2, first.pk),
        (first.pk, 1, None),
    ]
    missing = client.get(reverse("api-problem-scheme-versions", args=["NOPE"]))
    assert missing.status_code == 404


def test_the_api_needs_a_token_and_a_role(client, api_client_for, schemes):
    assert client.get(reverse("api-scheme-list")).status_code in (401, 403)
    no_role = api_client_for(UserFactory(username="nobody", roles=[]))
    assert no_role.get(reverse("api-scheme-list")).status_code == 403
    assert no_role.get(reverse("api-scheme-detail", args=[schemes[0].pk])).status_code == 403


def test_the_openapi_schema_lists_the_scheme_operations(client, admin_user):
    client.force_login(admin_user)
    schema = client.get(reverse("api-schema"), {"format": "json"}).json()
    operations = {op["operationId"] for path in schema["paths"].values() for op in path.values()}
    assert {"schemes_list", "schemes_retrieve", "problem_scheme_versions_list"} <= operations
