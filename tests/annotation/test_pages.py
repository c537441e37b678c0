"""Pages of the annotation app: grading page (query count, blindness), autosave and submit
endpoints, the no-work page, the admin pages."""

import json
from decimal import Decimal

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Assignment, Campaign, CampaignStatus, ErrorSpan, Grade, Item
from annotation.services.grade_checks import (
    NOT_GRADED_CHECKLIST,
)
from tests.annotation.factories import CampaignFactory, ItemFactory, approved_scheme, expert_in
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory

pytestmark = pytest.mark.django_db


def big_scheme_text(n: int) -> str:
    lines = ["## Checkpoints (7 pts total)", "", "**Chain A**"]
    for i in range(1, n + 1):
        lines.append(f"{i}. **Step {i}** (1 pts): do step {i}. [additive]")
    lines += ["", "## Deductions", "- Slip: -1"]
    return "\n".join(lines)


def leased_item(campaign=None, **kwargs):
    campaign = campaign or CampaignFactory()
    item = ItemFactory(campaign=campaign, **kwargs)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    return item, expert


def test_grading_page_shows_checklist_proof_and_keys(client):
    item, expert = leased_item()
    client.force_login(expert)
    response = client.get(reverse("annotation:item", args=[item.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-id="c1"' in html and 'data-id="d2"' in html
    assert "cap at 3/7" in html
    assert 'id="proof-text"' in html and "js/grading.js" in html
    assert "js/source-align.js" in html and "js/item-page.js" in html
    assert "<kbd>Enter</kbd>" in html and "toggle panes" in html
    assert "select text, then <kbd>e</kbd> to mark an error" in html
    assert 'id="span-popup"' in html and f"· proof {item.proof_id}" in html


def test_checklist_texts_are_rendered_with_their_math(client):
    math_scheme = """\
## Checkpoints (7 pts total)

**Chain A**
1. **Bound $a_n \\le 2^n$** (7 pts): by induction on $n$. [additive]

## Zero-credit items
- Checking $n = 1$ only.

## Deductions
- Claims $a_n < 2^n$ without proof: -1
"""
    proof = ProofFactory()
    item, expert = leased_item(proof=proof, scheme=approved_scheme(proof.problem, math_scheme))
    client.force_login(expert)
    html = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    checklist = html[html.index('data-id="c1"') :]
    assert "$a_n" not in checklist and "$n = 1$" not in checklist
    assert checklist.count('class="math') >= 3


@pytest.mark.parametrize("scale,needle", [("0-0.5-1", "Citing a paper"), ("1-4", "2x-1")])
def test_other_scales_show_their_definitions(client, scale, needle):
    campaign = CampaignFactory(scale=scale)
    item, expert = leased_item(campaign)
    client.force_login(expert)
    html = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    assert 'data-kind="award"' not in html
    assert needle in html


def test_the_final_score_takes_input_only_on_an_editable_page(client):
    """The scale's parts of the page (annotation.page.scale_parts, drawn once per scale and
    editability) follow the page: enabled while the expert may grade, disabled once the item
    is submitted and not being revised."""
    campaign = CampaignFactory(scale="0-0.5-1")
    item, expert = leased_item(campaign)
    client.force_login(expert)
    url = reverse("annotation:item", args=[item.pk])
    html = client.get(url).content.decode()
    assert html.count('name="score" value=') == 3 and 'name="score" value="1" disabled' not in html
    assert "<kbd>0</kbd> <kbd>h</kbd> <kbd>1</kbd> score" in html
    services.grade_submit(
        item=item, expert=expert, data=services.GradeInput.from_data({"score": "1"})
    )
    html = client.get(url).content.decode()  # submitted: read-only until the expert revises
    assert html.count(" disabled> ") >= 3 and 'name="score" value="1" disabled' in html
    html = client.get(url + "?revise=1").content.decode()
    assert 'name="score" value="1" disabled' not in html
    campaign.status = CampaignStatus.CLOSED
    campaign.save()
    html = client.get(url + "?revise=1").content.decode()
    assert 'name="score" value="1" disabled' in html


def test_grading_page_query_count_is_constant(client, django_assert_max_num_queries):
    counts = []
    for n in (2, 12):
        campaign = CampaignFactory()
        problem = ProblemFactory()
        approved_scheme(problem, big_scheme_text(n))
        proof = ProofFactory(problem=problem, text="Word " * 400)
        item = ItemFactory(campaign=campaign, proof=proof, scheme=problem.marking_schemes.get())
        expert = expert_in(campaign)
        services.assignment_next(campaign=campaign, expert=expert)
        spans = [
            {"start": i * 5, "end": i * 5 + 4, "quote": "Word", "category": "other"}
            for i in range(n * 3)
        ]
        services.grade_save_draft(
            item=item, expert=expert, data=services.GradeInput.from_data({"spans": spans})
        )
        client.force_login(expert)
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as ctx:
            response = client.get(reverse("annotation:item", args=[item.pk]))
        assert response.status_code == 200
        assert response.content.decode().count('data-kind="award"') == n
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1]
    with django_assert_max_num_queries(8):
        client.get(reverse("annotation:item", args=[item.pk]))


def api_json(client, method: str, url: str, data: dict):
    """A call of the API as the grading page makes it: JSON, with the session."""
    return client.generic(method, url, json.dumps(data), content_type="application/json")


def test_autosave_keeps_spans_and_returns_the_computed_score(client):
    item, expert = leased_item(proof__text="We have $x>1$ so clearly the claim holds.")
    client.force_login(expert)
    response = api_json(
        client,
        "PUT",
        reverse("api-item-draft", args=[item.pk]),
        {
            "awards": {"c1": "2", "c2": "1"},
            "deductions": ["d1"],
            "spans": [{"start": 15, "end": 22, "quote": "clearly", "category": "skipped_steps"}],
            "seconds_spent": 40,
            "base_version": 0,
        },
    )
    body = response.json()
    assert response.status_code == 200, body
    assert body["computed_score"] == "2.00" and body["version"] == 1
    assert body["score"] is None  # the final score follows the checklist: nothing chosen
    grade = Grade.objects.get(item=item, expert=expert)
    assert grade.status == "draft" and grade.seconds_spent == 40
    assert ErrorSpan.objects.get(grade=grade).quote == "clearly"
    html = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    assert "skipped_steps" in html and "Draft restored" in html
    assert 'data-grade-version="1"' in html


def test_the_page_calls_the_api_with_its_session_and_csrf_token(expert_user):
    """The grading page's door is the API's: a session without the CSRF token is refused, with
    it the draft is saved; no session at all is a 401 (the page then offers a log-in)."""
    from django.test import Client

    item, expert = leased_item()
    browser = Client(enforce_csrf_checks=True)
    url = reverse("api-item-draft", args=[item.pk])
    assert api_json(browser, "PUT", url, {"comment": "hm"}).status_code == 401
    browser.force_login(expert)
    html = browser.get(reverse("annotation:item", args=[item.pk])).content.decode()
    assert f'data-draft-url="{url}"' in html
    refused = api_json(browser, "PUT", url, {"comment": "hm"})
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    token = browser.cookies["csrftoken"].value
    saved = browser.generic(
        "PUT", url, json.dumps({"comment": "hm"}), "application/json", HTTP_X_CSRFTOKEN=token
    )
    assert saved.status_code == 200 and saved.json()["comment"] == "hm"


def test_submit_twice_makes_one_grade(client):
    item, expert = leased_item()
    client.force_login(expert)
    url = reverse("api-item-submit", args=[item.pk])
    data = {"awards": {"c1": "2", "c2": "3"}, "submit_key": "abc", "base_version": 0}
    first = api_json(client, "POST", url, data)
    second = api_json(client, "POST", url, data)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert first.json()["score"] == "5.00" and first.json()["version"] == 1
    assert Grade.objects.filter(item=item).count() == 1


def test_a_checklist_item_is_not_graded_until_the_expert_chooses(client):
    """Opening writes nothing; a draft of a comment stores no score; submitting that is
    refused in words; awards alone submit the computed score; another score needs a note."""
    item, expert = leased_item()
    client.force_login(expert)
    html = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    assert "Not graded yet" in html and "Draft restored" not in html
    assert '"computed_score": "0"' in html  # the empty checklist's total, shown, not saved
    assert not Grade.objects.filter(item=item).exists()

    draft = api_json(client, "PUT", reverse("api-item-draft", args=[item.pk]), {"comment": "hm"})
    assert draft.json()["computed_score"] is None
    grade = Grade.objects.get(item=item)
    assert (grade.score, grade.computed_score) == (None, None)
    assert (
        "Draft restored" in client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    )

    url = reverse("api-item-submit", args=[item.pk])
    refused = api_json(client, "POST", url, {"comment": "hm", "submit_key": "k"})
    assert refused.status_code == 400
    assert refused.json()["problems"] == [NOT_GRADED_CHECKLIST]
    assert Grade.objects.get(item=item).status == "draft"
    override = api_json(client, "POST", url, {"awards": {"c1": "2"}, "score": "1"})
    assert override.status_code == 400
    assert override.json()["problems"] == [
        "score_note: your final score 1 overrides the computed 2: say why in a note"
    ]

    submitted = api_json(client, "POST", url, {"awards": {"c1": "2"}, "submit_key": "k"})
    assert submitted.status_code == 200, submitted.json()
    grade = Grade.objects.get(item=item)
    assert (grade.status, grade.score, grade.computed_score) == ("submitted", 2, 2)
    html = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    assert "Draft restored" not in html and "You submitted this grade" in html


def test_versions_conflicts_and_revise_flags(client):
    """A different submission of a submitted grade is 409 with the stored grade unless revise
    is true (`false`, `0`, `no` are false; junk is a 400 naming the flag); a revision based on
    an older version is 409 too; an identical repeat is 200."""
    item, expert = leased_item(required_judgements=2)
    client.force_login(expert)
    url = reverse("api-item-submit", args=[item.pk])
    first = api_json(client, "POST", url, {"awards": {"c1": "2", "c2": "3"}}).json()
    assert (first["score"], first["version"]) == ("5.00", 1)
    other = {"awards": {"c1": "2", "c2": "2"}, "base_version": 1}
    for flag in ("", "?revise=false", "?revise=0", "?revise=no"):
        stale_tab = api_json(client, "POST", url + flag, other)
        assert stale_tab.status_code == 409, flag
        assert stale_tab.json()["grade"]["score"] == "5.00"
        assert "Already submitted as 5" in stale_tab.json()["detail"]
    junk = api_json(client, "POST", url + "?revise=perhaps", other)
    assert junk.status_code == 400 and list(junk.json()) == ["revise"]
    draft = api_json(client, "PUT", reverse("api-item-draft", args=[item.pk]), other)
    assert draft.status_code == 409 and draft.json()["grade"]["status"] == "submitted"

    revised = api_json(client, "POST", url + "?revise=true", other)
    assert revised.status_code == 200 and revised.json()["score"] == "4.00"
    assert revised.json()["version"] == 2
    assert api_json(client, "POST", url + "?revise=yes", other).status_code == 200  # a repeat
    stale = api_json(client, "POST", url + "?revise=1", other | {"awards": {"c1": "1"}})
    assert stale.status_code == 409 and stale.json()["grade"]["version"] == 2
    grade = Grade.objects.get(item=item)
    assert (grade.score, grade.version, grade.revisions.count()) == (4, 2, 1)
    assert client.get(reverse("annotation:item", args=[item.pk]) + "?revise=junk").status_code == (
        400
    )


def test_a_stale_draft_does_not_overwrite_a_newer_one(client):
    item, expert = leased_item()
    client.force_login(expert)
    url = reverse("api-item-draft", args=[item.pk])
    assert api_json(client, "PUT", url, {"comment": "tab A", "base_version": 0}).status_code == 200
    stale = api_json(client, "PUT", url, {"comment": "tab B", "base_version": 0})
    assert stale.status_code == 409 and stale.json()["grade"]["comment"] == "tab A"
    assert Grade.objects.get(item=item).comment == "tab A"
    again = api_json(client, "PUT", url, {"comment": "tab B", "base_version": 1})
    assert again.status_code == 200 and again.json()["version"] == 2
    # the same change sent again on the version it was based on (its first copy was stored as
    # the page that sent it was left): a repeat, the stored draft as it is, no new version
    repeat = api_json(client, "PUT", url, {"comment": "tab B", "base_version": 1})
    assert repeat.status_code == 200 and repeat.json()["version"] == 2


def test_score_preview_computes_and_saves_nothing(client):
    item, expert = leased_item()
    client.force_login(expert)
    url = reverse("api-item-score", args=[item.pk])
    body = api_json(client, "POST", url, {"awards": {"c1": "2", "c2": "3"}}).json()
    assert body["computed_score"] == "5.00" and body["breakdown"]["score"] == "5"
    bad = api_json(client, "POST", url, {"awards": {"c1": "9"}})
    assert bad.status_code == 400 and "c1" in bad.json()["problems"][0]
    assert not Grade.objects.filter(item=item).exists()


def test_blindness_other_expert_cannot_open_or_probe_an_item(client):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, required_judgements=2)
    a, b, outsider = expert_in(campaign), expert_in(campaign), expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=a)
    services.assignment_next(campaign=campaign, expert=b)
    services.grade_submit(
        item=item,
        expert=a,
        data=services.GradeInput.from_data({"score": "6", "comment": "SECRET-COMMENT-A"}),
    )
    client.force_login(b)
    html = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    assert "SECRET-COMMENT-A" not in html and "Other judgements" not in html
    client.force_login(outsider)
    assert client.get(reverse("annotation:item", args=[item.pk])).status_code == 404
    assert client.get(reverse("annotation:item", args=[item.pk + 999])).status_code == 404
    assert api_json(client, "PUT", reverse("api-item-draft", args=[item.pk]), {}).status_code == 404
    services.item_reveal_judgements(item=item)
    client.force_login(b)
    html = client.get(reverse("annotation:item", args=[item.pk])).content.decode()
    assert "SECRET-COMMENT-A" in html


def test_no_work_left_page_shows_totals(client):
    campaign = CampaignFactory(name="Round one")
    item, expert = leased_item(campaign)
    services.grade_submit(
        item=item, expert=expert, data=services.GradeInput.from_data({"score": "3"})
    )
    client.force_login(expert)
    response = client.post(reverse("annotation:next", args=[campaign.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "No work left in Round one" in html and "<strong>1</strong>grades you submitted" in html


def test_next_is_a_post_that_leases_and_redirects_to_the_item(client):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    client.force_login(expert)
    url = reverse("annotation:next", args=[campaign.slug])
    got = client.get(url)
    assert got.url == reverse("annotation:campaign", args=[campaign.slug])
    assert not Assignment.objects.filter(expert=expert).exists()
    response = client.post(url)
    assert response.status_code == 303 and response.url == reverse(
        "annotation:item", args=[item.pk]
    )
    assert Assignment.objects.filter(expert=expert, item=item).exists()


def test_non_member_cannot_ask_for_work(client):
    campaign = CampaignFactory()
    client.force_login(UserFactory(roles=["expert"]))
    assert client.post(reverse("annotation:next", args=[campaign.slug])).status_code == 403


def test_admin_creates_campaign_adds_member_and_items(client, admin_user):
    client.force_login(admin_user)
    response = client.post(
        reverse("annotation:campaign-create"),
        {
            "name": "Spring pilot",
            "task_kind": "proof_grading",
            "scale": "0-7",
            "double_share": "1",
            "sample_seed": "1",
            "tolerance": "1",
            "label_policy": "mean_floor",
            "lease_minutes": "60",
            "gold_rate": "0",
            "fast_seconds": "60",
            "error_taxonomy": "",
            "guidelines": "Be *fair*.",
            "status": "open",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    campaign = Campaign.objects.get(slug="spring-pilot")
    assert len(campaign.error_taxonomy) == 11
    expert = UserFactory(username="eve", roles=["expert"])
    client.post(
        reverse("annotation:member-add", args=[campaign.slug]),
        {"username": "eve", "role": "expert"},
    )
    assert campaign.members.filter(user=expert, role="expert").exists()
    problem = ProblemFactory(contest="Selection Cup", external_id="SC-1")
    ProofFactory.create_batch(3, problem=problem, generator="gen-x")
    ProofFactory(generator="gen-y")
    preview = client.get(
        reverse("annotation:items-create", args=[campaign.slug]),
        {"contest": "Selection Cup", "generator": "gen-x"},
    )
    assert "<strong>3</strong> proofs match" in preview.content.decode()
    client.post(
        reverse("annotation:items-create", args=[campaign.slug]),
        {"contest": "Selection Cup", "generator": "gen-x"},
        follow=True,
    )
    items = Item.objects.filter(campaign=campaign)
    assert items.count() == 3 and {i.required_judgements for i in items} == {2}
    assert {i.scheme_id for i in items} == {None}
    dashboard = client.get(reverse("annotation:campaign", args=[campaign.slug])).content.decode()
    assert 'id="items-waiting">3<' in dashboard and "eve" in dashboard


def test_dashboard_plots_scores_per_generator_and_history(client, admin_user):
    campaign = CampaignFactory()
    item, expert = leased_item(campaign, proof__generator="gen-<b>")
    grade = services.grade_submit(
        item=item, expert=expert, data=services.GradeInput.from_data({"score": "4"})
    )
    services.grade_revise(
        grade=grade, user=expert, data=services.GradeInput.from_data({"score": "3"})
    )
    client.force_login(admin_user)
    html = client.get(reverse("annotation:campaign", args=[campaign.slug])).content.decode()
    assert "<svg" in html and "gen-&lt;b&gt;" in html and "<circle" in html
    # beside the plot, its numbers: one score of 3 (the revision), mean 3.00
    table = html[html.index('id="generator-scores"') :]
    table = table[: table.index("</table>")]
    assert "<td>gen-&lt;b&gt;</td><td>1</td><td>3.00</td>" in table
    assert 'id="items-done">1<' in html
    assert "score" in html and ">4<" in html and ">3<" in html


def test_expert_sees_own_progress_not_the_dashboard(client):
    campaign = CampaignFactory()
    item, expert = leased_item(campaign)
    client.force_login(expert)
    html = client.get(reverse("annotation:campaign", args=[campaign.slug])).content.decode()
    assert "grades submitted" in html and "Experts" not in html


def _graded(campaign, expert, score, *, submit=True, required=2):
    item = ItemFactory(campaign=campaign, required_judgements=required)
    services.assignment_create_manual(item=item, expert=expert, assigned_by=UserFactory())
    data = services.GradeInput(score=Decimal(score))
    if submit:
        services.grade_submit(item=item, expert=expert, data=data)
    else:
        services.grade_save_draft(item=item, expert=expert, data=data)
    return item


def test_expert_lists_own_judgements_to_continue_or_revise(client, django_assert_num_queries):
    campaign = CampaignFactory()
    expert, other = expert_in(campaign, "mine"), expert_in(campaign, "theirs")
    submitted = _graded(campaign, expert, "5")
    draft = _graded(campaign, expert, "2", submit=False)
    single = _graded(campaign, expert, "6", required=1)  # labelled "single": still revisable
    hidden = _graded(campaign, other, "1")
    client.force_login(expert)
    url = reverse("annotation:campaign", args=[campaign.slug])
    with django_assert_num_queries(8):
        html = client.get(url).content.decode()
    assert "3 judgements of yours" in html
    for item in (submitted, draft, single):
        assert f'href="/annotation/items/{item.pk}/"' in html
    assert f"/annotation/items/{hidden.pk}/" not in html
    assert html.count(">revise<") == 2 and html.count(">continue<") == 1
    Item.objects.filter(pk=single.pk).update(is_final=True)  # adjudicated
    html = client.get(url).content.decode()
    assert "final: adjudicated" in html and html.count(">revise<") == 1


def test_own_judgements_page_through_htmx(client):
    campaign = CampaignFactory()
    expert = expert_in(campaign, "busy")
    items = [_graded(campaign, expert, "3") for _ in range(26)]
    client.force_login(expert)
    url = reverse("annotation:campaign", args=[campaign.slug])
    first = client.get(url).content.decode()
    assert "26 judgements" in first and "Page 1 of 2" in first
    assert f"/annotation/items/{items[0].pk}/" not in first  # the oldest change is on page 2
    fragment = client.get(url, {"page": 2}, headers={"HX-Request": "true"}).content.decode()
    assert f"/annotation/items/{items[0].pk}/" in fragment
    assert "<h1>" not in fragment and "Page 2 of 2" in fragment


def test_admin_assigns_and_moves_by_hand(client, admin_user):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    a, b = expert_in(campaign, "anna"), expert_in(campaign, "ben")
    client.force_login(admin_user)
    client.post(
        reverse("annotation:assign", args=[campaign.slug]), {"item": item.pk, "username": "anna"}
    )
    assignment = item.assignments.get(expert=a)
    html = client.get(reverse("annotation:campaign", args=[campaign.slug])).content.decode()
    assert f"item {item.pk}" in html
    client.post(
        reverse("annotation:move", args=[campaign.slug]),
        {"assignment": assignment.pk, "username": "ben"},
    )
    assert item.assignments.get(expert=b).status == "active"


def test_home_and_nav_link_to_campaigns(client, expert_user, admin_user):
    client.force_login(expert_user)
    html = client.get("/").content.decode()
    assert reverse("annotation:campaigns") in html and "Grading" in html
    client.force_login(admin_user)
    assert "Campaigns" in client.get("/").content.decode()


def test_skip_releases_and_heartbeat_extends(client):
    campaign = CampaignFactory()
    item, expert = leased_item(campaign)
    client.force_login(expert)
    beat = client.post(reverse("api-item-lease", args=[item.pk]))
    assert beat.status_code == 200 and beat.json()["leased_until"]
    response = client.post(reverse("annotation:item-skip", args=[item.pk]))
    assert item.assignments.get(expert=expert).status == "released"
    # the skip leases the next item at once (here none is left: the no-work page)
    assert response.status_code == 200 and "No work left" in response.content.decode()
