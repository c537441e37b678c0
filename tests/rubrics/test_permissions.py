"""Who may open what among the scheme pages and endpoints, role by role."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from rubrics.models import SchemeMethod
from rubrics.services import scheme_version_create
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory
from tests.rubrics.factories import VALID_SCHEME

pytestmark = pytest.mark.django_db

ROLES = ["admin", "expert", "adjudicator", "researcher"]


@pytest.fixture
def scheme():
    return scheme_version_create(
        problem=ProblemFactory(external_id="PERM-S1"), text=VALID_SCHEME, method=SchemeMethod.MANUAL
    )


def read_pages(scheme) -> list[str]:
    return [reverse("rubrics:list"), reverse("rubrics:detail", args=[scheme.pk])]


def admin_pages(scheme) -> list[str]:
    return [
        reverse("rubrics:edit", args=[scheme.pk]),
        reverse("rubrics:ratings"),
        reverse("rubrics:new", args=[scheme.problem.external_id]),
    ]


def endpoints(scheme) -> list[str]:
    return [
        reverse("api-scheme-list"),
        reverse("api-scheme-detail", args=[scheme.pk]),
        reverse("api-problem-scheme-versions", args=[scheme.problem.external_id]),
    ]


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_schemes_only_admins_open_the_admin_pages(client, scheme, role):
    client.force_login(UserFactory(roles=[role]))
    for url in read_pages(scheme):
        assert client.get(url).status_code == 200, url
    for url in admin_pages(scheme):
        assert client.get(url).status_code == (200 if role == "admin" else 403), url


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_the_schemes_api(api_client_for, scheme, role):
    api = api_client_for(UserFactory(roles=[role]))
    for url in endpoints(scheme):
        assert api.get(url).status_code == 200, url


def test_anonymous_is_refused_everywhere(client, scheme):
    for url in [*read_pages(scheme), *admin_pages(scheme)]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), (
            url
        )
    for url in endpoints(scheme):
        assert APIClient().get(url).status_code == 401, url


def test_the_writes_are_post_only(client, admin_user, scheme):
    client.force_login(admin_user)
    assert client.get(reverse("rubrics:approve", args=[scheme.pk])).status_code == 405
    assert client.get(reverse("rubrics:rate", args=[scheme.pk])).status_code == 405
