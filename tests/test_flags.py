"""Query flags are read by one helper (core.http) on pages and in the API alike."""

import pytest
from django.http import QueryDict
from django.urls import reverse

from core.http import FlagError, query_flag


def test_flags_read_as_booleans_and_junk_names_the_flag():
    for raw, wanted in [("1", True), ("TRUE", True), ("yes", True), ("on", True)]:
        assert query_flag(QueryDict(f"revise={raw}"), "revise") is wanted
    for raw in ("0", "false", "No", "off", ""):
        assert query_flag(QueryDict(f"revise={raw}"), "revise") is False
    assert query_flag(QueryDict(""), "revise") is False
    with pytest.raises(FlagError) as refused:
        query_flag(QueryDict("next=later"), "next")
    assert list(refused.value.detail) == ["next"]


@pytest.mark.django_db
def test_a_page_answers_400_naming_a_junk_flag(client, adjudicator_user):
    client.force_login(adjudicator_user)
    queue = reverse("adjudication:queue")
    assert client.get(queue + "?mine=false").status_code == 200
    refused = client.get(queue + "?mine=perhaps")
    assert refused.status_code == 400 and refused.content.decode().startswith("mine: ")
