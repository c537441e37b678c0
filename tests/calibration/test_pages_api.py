"""Calibration pages and API: the round form, the feedback fragment, the report (query counts,
downloads), the requirement page, the gate's message, and the API's 4xx naming the field."""

import json

import pytest

from annotation.models import CampaignMember, Item
from calibration.models import CalibrationItem, CalibrationRequirement
from calibration.services import calibration_requirement_set
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.calibration.factories import expert_user, gold_item, gold_round, grade_next
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return UserFactory(roles=["admin"])


def test_round_form_lists_gold_items_and_creates_a_round(client, admin):
    source = CampaignFactory()
    a, b = gold_item(source, 5), gold_item(source, 1)
    ItemFactory(campaign=source)  # no label: not offered
    client.force_login(admin)
    page = client.get("/calibration/rounds/new/")
    assert page.status_code == 200
    offered = {int(v) for v in page.context["candidates"].values_list("pk", flat=True)}
    assert offered == {a.pk, b.pk}
    expert = expert_user("reader")
    response = client.post(
        "/calibration/rounds/new/",
        {
            "name": "Warm-up",
            "slug": "",
            "guidelines": "",
            "experts": "reader",
            "items": [a.pk, b.pk],
        },
    )
    assert response.status_code == 302
    round = CampaignMember.objects.get(user=expert).campaign
    assert round.is_calibration and round.slug == "warm-up"
    assert CalibrationItem.objects.filter(item__campaign=round).count() == 2


def test_round_form_says_what_is_wrong(client, admin):
    client.force_login(admin)
    response = client.post("/calibration/rounds/new/", {"name": "Empty", "experts": "ghost"})
    assert response.status_code == 200
    assert "No such user(s): ghost" in response.content.decode()
    response = client.post("/calibration/rounds/new/", {"name": "Empty"})
    assert "choose at least one gold item" in response.content.decode()


def test_round_form_refuses_experts(client):
    client.force_login(expert_user())
    assert client.get("/calibration/rounds/new/").status_code == 403


def test_feedback_fragment_and_page_after_submission(client, django_assert_max_num_queries):
    expert = expert_user()
    round, _ = gold_round([5], experts=[expert], rationale="Equality case *missing*.")
    item = round.items.get()
    client.force_login(expert)
    assert client.get(f"/calibration/items/{item.pk}/feedback/").status_code == 404
    grade_next(round, expert, 3)
    with django_assert_max_num_queries(6):
        fragment = client.get(f"/calibration/items/{item.pk}/feedback/", HTTP_HX_REQUEST="true")
    body = fragment.content.decode()
    assert fragment.status_code == 200 and "<html" not in body
    assert 'id="feedback-gold">5<' in body and 'id="feedback-error">-2<' in body
    assert "<em>missing</em>" in body
    assert "HX-Request" in fragment["Vary"]
    page = client.get(f"/calibration/items/{item.pk}/feedback/")
    assert "<html" in page.content.decode()


def test_grading_page_of_a_round_announces_then_loads_the_feedback(client):
    expert = expert_user()
    round, _ = gold_round([5], experts=[expert])
    client.force_login(expert)
    response = client.post(f"/annotation/{round.slug}/next/")
    item_url = response["Location"]
    page = client.get(item_url).content.decode()
    assert 'data-after-submit="reload"' in page and 'id="calibration-notice"' in page
    grade_next(round, expert, 4)
    page = client.get(item_url).content.decode()
    assert 'hx-get="/calibration/items/' in page and "revise it" not in page


def test_report_page_query_count_is_flat(client, admin, django_assert_max_num_queries):
    experts = [expert_user(f"e{i}") for i in range(3)]
    round, _ = gold_round([5, 2, 4, 3], experts=experts, topics=["A", "C", "G", "N"])
    for expert in experts:
        for score in (5, 3, 4, 0):
            grade_next(round, expert, score)
    client.force_login(admin)
    with django_assert_max_num_queries(8):
        home = client.get("/calibration/")
    assert [r.username for r in home.context["reports"]] == ["e0", "e1", "e2"]
    with django_assert_max_num_queries(8):
        report = client.get("/calibration/report/e1/")
    body = report.content.decode()
    assert report.status_code == 200 and "<svg" in body
    assert 'id="overall-mae">1.00<' in body  # |0| + |1| + |0| + |3| over 4
    assert 'id="overall-bias">-0.50<' in body


def test_report_downloads(client):
    expert = expert_user("dl")
    round, _ = gold_round([5, 2], experts=[expert])
    grade_next(round, expert, 6)
    grade_next(round, expert, 2)
    client.force_login(expert)
    csv_body = client.get("/calibration/report/dl/download.csv").content.decode().splitlines()
    assert csv_body[0].startswith("expert,submitted_at,item_id")
    assert [line.split(",")[-1] for line in csv_body[1:]] == ["1.0", "0.0"]
    data = json.loads(client.get("/calibration/report/dl/download.json").content)
    assert data["overall"] == {"key": "all", "n": 2, "bias": 0.5, "mae": 0.5}
    assert client.get("/calibration/report/dl/download.xml").status_code == 404
    assert client.get("/calibration/download.csv").status_code == 403
    client.force_login(UserFactory(roles=["admin"]))
    every = client.get("/calibration/download.csv").content.decode().splitlines()
    assert len(every) == 3 and every[1].startswith("dl,")


def test_expert_sees_only_their_own_report_page(client):
    me, other = expert_user("mine"), expert_user("theirs")
    client.force_login(me)
    assert client.get("/calibration/").status_code == 302
    assert client.get("/calibration/report/theirs/").status_code == 403
    assert client.get("/calibration/report/theirs/download.csv").status_code == 403
    assert client.get("/calibration/report/mine/").status_code == 200
    assert other.username == "theirs"


def test_requirement_page_sets_and_shows_who_passed(client, admin, django_assert_max_num_queries):
    campaign = CampaignFactory()
    experts = [expert_in(campaign, f"x{i}") for i in range(3)]
    round, _ = gold_round([5, 2])
    client.force_login(admin)
    response = client.post(
        f"/calibration/campaigns/{campaign.slug}/requirement/",
        {"round": round.slug, "max_mae": "1", "min_items": "2"},
    )
    assert response.status_code == 303
    for expert, scores in zip(experts, [(5, 2), (7, 1), (5,)], strict=True):
        for score in scores:
            grade_next(round, expert, score)
    from calibration.services import calibration_passes_refresh

    calibration_passes_refresh(round=round)
    with django_assert_max_num_queries(12):  # whatever the number of experts
        page = client.get(f"/calibration/campaigns/{campaign.slug}/requirement/")
    rows = [(r.username, r.n, r.passed) for r in page.context["rows"]]
    assert rows == [("x0", 2, True), ("x1", 2, False), ("x2", 1, False)]
    bad = client.post(
        f"/calibration/campaigns/{campaign.slug}/requirement/",
        {"round": round.slug, "max_mae": "-1", "min_items": "0"},
    )
    assert bad.status_code == 200 and bad.context["form"].errors.keys() == {"max_mae", "min_items"}
    client.post(f"/calibration/campaigns/{campaign.slug}/requirement/remove/")
    assert not CalibrationRequirement.objects.filter(campaign=campaign).exists()


def test_blocked_expert_gets_a_clear_page_and_api_answer(client, api_client_for):
    campaign = CampaignFactory()
    ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    round, _ = gold_round([5])
    calibration_requirement_set(campaign=campaign, round=round, max_mae=1, min_items=1, set_by=None)
    client.force_login(expert)
    page = client.post(f"/annotation/{campaign.slug}/next/")
    standing = f"/calibration/campaigns/{campaign.slug}/standing/"
    assert page.status_code == 303 and page["Location"] == standing
    body = client.get(standing).content.decode()
    assert "at most 1 on at least 1 gold item" in body and f"/annotation/{round.slug}/" in body
    assert "graded 0 of the 1 gold item needed; 1 gold item left" in body
    api = api_client_for(expert)
    answer = api.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    assert answer.status_code == 403 and "calibration round" in answer.json()["detail"]
    assert standing in answer.json()["detail"]


def test_a_failed_expert_with_no_gold_left_is_told_and_an_admin_gives_a_new_round(
    client, admin, api_client_for
):
    source = CampaignFactory()
    first = [gold_item(source, value) for value in (5, 2)]
    spare = [gold_item(source, value) for value in (4, 3)]
    campaign = CampaignFactory()
    ItemFactory(campaign=campaign)
    expert = expert_in(campaign, "stuck")
    from calibration.services import calibration_round_create

    round = calibration_round_create(name="Gate", gold_items=first, created_by=admin)
    calibration_requirement_set(campaign=campaign, round=round, max_mae=1, min_items=2, set_by=None)
    grade_next(round, expert, 7)
    grade_next(round, expert, 6)  # MAE 3 on 2 items, nothing left
    client.force_login(expert)
    page = client.post(f"/annotation/{round.slug}/next/")
    assert 'id="round-done"' in page.content.decode()  # the round says it is done, and why
    body = client.get(f"/calibration/campaigns/{campaign.slug}/standing/").content.decode()
    assert 'id="standing-stuck"' in body and "no gold item of Gate is left to grade" in body
    assert "MAE 3.00 on 2 gold items, over the 1 allowed" in body
    client.force_login(admin)
    requirement = f"/calibration/campaigns/{campaign.slug}/requirement/"
    page = client.get(requirement)
    (row,) = page.context["rows"]
    assert row.stuck and 'class="blocked"' in page.content.decode()
    (listed,) = api_client_for(admin).get(f"/api/v1{requirement}").json()["experts"]
    assert (listed["blocked"], listed["left"], listed["checked_on"]) == (True, 0, round.slug)
    assert "no gold item of Gate is left to grade" in listed["why"]
    given = client.post(f"/calibration/campaigns/{campaign.slug}/requirement/retake/stuck/")
    assert given.status_code == 303
    retake = CalibrationItem.objects.filter(source__in=spare).values_list(
        "item__campaign__slug", flat=True
    )
    assert len(set(retake)) == 1 and retake.count() == 2  # the two gold items never graded
    (row,) = client.get(requirement).context["rows"]
    assert (row.retake, row.left, row.n, row.stuck) == (True, 2, 0, False)
    # graded well on the new round, the expert passes and gets work from the campaign
    new_round = CalibrationItem.objects.filter(source=spare[0]).get().item.campaign
    grade_next(new_round, expert, 4)
    grade_next(new_round, expert, 3)
    client.force_login(expert)
    page = client.post(f"/annotation/{campaign.slug}/next/")
    assert page.status_code == 303 and "/annotation/items/" in page["Location"]
    # when no gold item is left that the expert never graded, the admin is told why
    client.force_login(admin)
    given = client.post(
        f"/calibration/campaigns/{campaign.slug}/requirement/retake/stuck/", follow=True
    )
    assert "only 0 gold item(s) of scale 0-7 grade proofs stuck has not graded" in (
        given.content.decode().replace("&#x27;", "'")
    )


def test_api_round_feedback_report_and_requirement(api_client_for, admin):
    source = CampaignFactory()
    items = [gold_item(source, 5, rationale="R."), gold_item(source, 2)]
    expert = expert_user("api-expert")
    api = api_client_for(admin)
    created = api.post(
        "/api/v1/calibration/rounds/",
        {"name": "API round", "gold_items": [i.pk for i in items], "experts": ["api-expert"]},
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json() == {"slug": "api-round", "name": "API round", "scale": "0-7", "items": 2}
    round = source.__class__.objects.get(slug="api-round")
    grade_next(round, expert, 4)
    graded = Item.objects.get(campaign=round, grades__expert=expert)
    mine = api_client_for(expert)
    feedback = mine.get(f"/api/v1/calibration/items/{graded.pk}/feedback/").json()
    assert feedback["gold"] in ("5.00", "2.00") and feedback["source"] == "Adjudication"
    report = mine.get("/api/v1/calibration/experts/api-expert/report/").json()
    assert report["overall"]["n"] == 1 and len(report["grades"]) == 1
    assert mine.get(f"/api/v1/calibration/experts/{admin.username}/report/").status_code == 403
    campaign = CampaignFactory()
    answer = api.post(
        f"/api/v1/calibration/campaigns/{campaign.slug}/requirement/set/",
        {"round": "api-round", "max_mae": "0.5", "min_items": 1},
        format="json",
    )
    assert answer.status_code == 200 and answer.json()["round"] == "api-round"
    assert (
        api.get(f"/api/v1/calibration/campaigns/{campaign.slug}/requirement/").json()["min_items"]
        == 1
    )


def test_api_names_the_field_on_bad_input(api_client_for, admin):
    api = api_client_for(admin)
    plain = ItemFactory()
    bad = api.post(
        "/api/v1/calibration/rounds/", {"name": "x", "gold_items": [plain.pk]}, format="json"
    )
    assert bad.status_code == 400 and "gold_items" in bad.json()
    bad = api.post("/api/v1/calibration/rounds/", {"name": "x", "gold_items": "7"}, format="json")
    assert bad.status_code == 400 and "gold_items" in bad.json()
    campaign = CampaignFactory()
    bad = api.post(
        f"/api/v1/calibration/campaigns/{campaign.slug}/requirement/set/",
        {"round": campaign.slug, "max_mae": "1", "min_items": 1},
        format="json",
    )
    assert bad.status_code == 400 and "round" in bad.json()
    bad = api.post(
        f"/api/v1/calibration/campaigns/{campaign.slug}/requirement/set/",
        {"round": "x", "max_mae": "-1", "min_items": 0},
        format="json",
    )
    assert bad.status_code == 400 and {"max_mae", "min_items"} <= bad.json().keys()
    assert api.get("/api/v1/calibration/items/999999/feedback/").status_code == 404
    assert api.get("/api/v1/calibration/experts/nobody/report/").status_code == 404
    assert (
        api_client_for(expert_user())
        .post("/api/v1/calibration/rounds/", {"name": "x", "gold_items": [1]}, format="json")
        .status_code
        == 403
    )


def test_a_round_takes_no_items_but_its_gold_copies(client, admin, api_client_for):
    """Items added by hand to a round would get no gold answer and no label: the round's
    dashboard offers no "Add items", and the page and the API refuse them, saying where rounds
    are made; nothing is added."""
    from tests.problems.page_factories import ProofFactory

    round, _ = gold_round([3, 5])
    proof = ProofFactory()
    client.force_login(admin)
    dashboard = client.get(f"/annotation/{round.slug}/").content.decode()
    assert "Add items" not in dashboard
    before = Item.objects.filter(campaign=round).count()
    page = client.post(
        f"/annotation/{round.slug}/items/new/",
        {"problem": proof.problem.external_id, "required_judgements": "1"},
        follow=True,
    )
    api = api_client_for(admin).post(
        f"/api/v1/campaigns/{round.slug}/items/", {"proof_ids": [proof.pk]}, format="json"
    )
    assert api.status_code == 400 and "calibration round" in api.json()["problems"][0]
    assert Item.objects.filter(campaign=round).count() == before
    assert page.redirect_chain[-1][0] == f"/annotation/{round.slug}/"
    assert "takes only copies of gold items" in page.content.decode()


def test_a_new_round_given_twice_is_one(admin):
    from calibration.services import calibration_retake_create, calibration_round_create

    source = CampaignFactory()
    first = [gold_item(source, 5)]
    spare = [gold_item(source, 4)]
    campaign = CampaignFactory()
    expert = expert_in(campaign, "twice")
    round = calibration_round_create(name="Gate", gold_items=first, created_by=admin)
    requirement = calibration_requirement_set(
        campaign=campaign, round=round, max_mae=0, min_items=1, set_by=None
    )
    grade_next(round, expert, 0)
    given = calibration_retake_create(requirement=requirement, expert=expert, created_by=admin)
    again = calibration_retake_create(requirement=requirement, expert=expert, created_by=admin)
    assert given == again and CalibrationItem.objects.filter(source__in=spare).count() == 1
