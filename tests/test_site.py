import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_home_requires_login(client):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_home_lists_the_users_roles(client, expert_user):
    client.force_login(expert_user)
    response = client.get(reverse("home"))
    assert response.status_code == 200
    assert b'<span class="tag">expert</span>' in response.content


def test_health_check_needs_no_login(client):
    assert client.get(reverse("healthz")).content == b"ok"
