"""core.http.page_or_fragment: the fragment when htmx asks, the page otherwise (and after Back,
when htmx restores history), and `Vary: HX-Request` on both, so no cache mixes them up."""

from django.urls import reverse


def test_the_problem_list_answers_page_or_fragment_and_always_varies(client, expert_user):
    client.force_login(expert_user)
    url = reverse("problems:list")
    page = client.get(url)
    fragment = client.get(url, headers={"HX-Request": "true"})
    restored = client.get(url, headers={"HX-Request": "true", "HX-History-Restore-Request": "true"})
    assert b"<html" in page.content and b"<html" not in fragment.content
    assert b"<html" in restored.content
    for response in (page, fragment, restored):
        assert "HX-Request" in response.headers["Vary"]
