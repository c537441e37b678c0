"""Who may open what: each role against each corpus page and API endpoint."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from tests.factories import UserFactory
from tests.problems.page_factories import ProofFactory, VerifierAnalysisFactory

pytestmark = pytest.mark.django_db

ROLES = ["admin", "expert", "adjudicator", "researcher"]


@pytest.fixture
def corpus():
    proof = ProofFactory(problem__external_id="PERM-1")
    VerifierAnalysisFactory(proof=proof)
    return proof


def pages(proof) -> list[str]:
    return [
        reverse("problems:list"),
        reverse("problems:detail", args=[proof.problem.external_id]),
        reverse("problems:proof", args=[proof.pk]),
    ]


def endpoints(proof) -> list[str]:
    return [
        reverse("api-problem-list"),
        reverse("api-problem-detail", args=[proof.problem.external_id]),
        reverse("api-proof-list"),
        reverse("api-proof-detail", args=[proof.pk]),
    ]


def test_anonymous_visitors_are_sent_to_log_in(client, corpus):
    for url in [reverse("home"), *pages(corpus), reverse("api-docs")]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login") + "?next="), url


def test_anonymous_api_calls_get_401(corpus):
    for url in [*endpoints(corpus), reverse("api-schema")]:
        assert APIClient().get(url).status_code == 401, url


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_the_corpus_pages(client, corpus, role):
    client.force_login(UserFactory(roles=[role]))
    for url in [reverse("home"), *pages(corpus), reverse("api-docs")]:
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_the_corpus_api_by_token(api_client_for, corpus, role):
    api = api_client_for(UserFactory(roles=[role]))
    for url in [*endpoints(corpus), reverse("api-schema")]:
        assert api.get(url).status_code == 200, url


def test_a_user_without_a_role_is_refused(client, api_client_for, corpus):
    user = UserFactory(roles=[])
    client.force_login(user)
    assert client.get(reverse("home")).status_code == 200
    for url in pages(corpus):
        assert client.get(url).status_code == 403, url
    api = api_client_for(user)
    for url in endpoints(corpus):
        assert api.get(url).status_code == 403, url


def test_session_auth_works_for_the_api_from_the_browser(client, corpus):
    client.force_login(UserFactory(roles=["researcher"]))
    assert client.get(reverse("api-proof-list")).status_code == 200


def test_token_authentication_reads_the_user_and_roles_in_one_statement(
    db, django_assert_num_queries
):
    from rest_framework.authtoken.models import Token
    from rest_framework.exceptions import AuthenticationFailed

    from core.authentication import TokenAuthentication
    from core.roles import Role, user_roles

    user = UserFactory(username="tok-expert", roles=["expert", "researcher"])
    key = Token.objects.create(user=user).key
    with django_assert_num_queries(1):
        found, token = TokenAuthentication().authenticate_credentials(key)
        assert user_roles(found) == {Role.EXPERT, Role.RESEARCHER}
    assert (found.pk, found.username, found.is_superuser, token.key) == (
        user.pk,
        "tok-expert",
        False,
        key,
    )
    boss = UserFactory(username="tok-super", is_superuser=True)
    found, _ = TokenAuthentication().authenticate_credentials(Token.objects.create(user=boss).key)
    assert user_roles(found) == {Role.ADMIN}
    user.is_active = False
    user.save()
    for bad in (key, "no-such-token"):
        with pytest.raises(AuthenticationFailed):
            TokenAuthentication().authenticate_credentials(bad)
