"""Pages: the queue and case page (query counts, anonymity, highlighting), resolving by form,
blindness for the item's own experts, the dashboard, the CSV, gold and manual sending."""

import csv
import io
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from adjudication.metrics import campaign_agreement
from adjudication.models import AdjudicationCase, CaseStatus, FinalLabel
from adjudication.services import case_resolve, case_return
from annotation.models import Grade, Item
from tests.adjudication.factories import (
    CampaignFactory,
    ErrorSpanFactory,
    ItemFactory,
    judge,
)
from tests.factories import UserFactory
from tests.problems.page_factories import ProofFactory

pytestmark = pytest.mark.django_db


def disputed(campaign=None, scores=(1, 6), spans=0):
    item = ItemFactory(**({"campaign": campaign} if campaign else {}))
    grades = judge(item, *scores)
    for grade in grades:
        for n in range(spans):
            ErrorSpanFactory(grade=grade, start=n, end=n + 3, note=f"note {grade.pk}-{n}")
    return AdjudicationCase.objects.get(item=item), grades


@pytest.fixture
def adjudicator(client):
    user = UserFactory(roles=["adjudicator"])
    client.force_login(user)
    return user


def test_queue_is_sorted_by_disagreement_and_has_constant_queries(
    client, adjudicator, django_assert_max_num_queries
):
    campaign = CampaignFactory()
    small, _ = disputed(campaign, (3, 5))
    large, _ = disputed(campaign, (0, 7))
    with django_assert_max_num_queries(8):
        body = client.get(reverse("adjudication:queue")).content.decode()
    assert body.index(f"#{large.pk}<") < body.index(f"#{small.pk}<")
    for _ in range(5):
        disputed(campaign, (0, 4))
    with django_assert_max_num_queries(8):
        assert client.get(reverse("adjudication:queue")).status_code == 200


def many_cases(count: int) -> list[AdjudicationCase]:
    """`count` open cases, each on its own item, disagreement falling with the index."""
    campaign = CampaignFactory()
    problem = ProofFactory().problem
    items = Item.objects.bulk_create(
        Item(campaign=campaign, proof=proof, required_judgements=2)
        for proof in ProofFactory.create_batch(count, problem=problem)
    )
    return AdjudicationCase.objects.bulk_create(
        AdjudicationCase(
            item=item, opened_reason="disagreement", disagreement=Decimal(count - n) / 100
        )
        for n, item in enumerate(items)
    )


def test_queue_pages_by_disagreement_with_constant_queries(
    client, adjudicator, django_assert_num_queries
):
    cases = many_cases(201)
    url = reverse("adjudication:queue")
    with django_assert_num_queries(5):
        first = client.get(url, {"status": "open"}).content.decode()
    assert f"#{cases[0].pk}<" in first and f"#{cases[199].pk}<" in first
    assert f"#{cases[200].pk}<" not in first
    assert "Page 1 of 2" in first and "201 cases" in first
    assert 'href="?status=open&amp;page=2" hx-get="?status=open&amp;page=2"' in first
    with django_assert_num_queries(5):
        second = client.get(url, {"status": "open", "page": 2}).content.decode()
    assert f"#{cases[200].pk}<" in second and f"#{cases[199].pk}<" not in second
    assert 'href="?status=open&amp;page=1"' in second and "Page 2 of 2" in second
    fragment = client.get(url, {"page": 2}, headers={"HX-Request": "true"}).content.decode()
    assert fragment.startswith('<p class="muted result-count">') and "<html" not in fragment
    assert f"#{cases[200].pk}<" in fragment


def test_queue_hides_cases_on_items_the_user_graded(client):
    case, (a, _) = disputed()
    a.expert.groups.add(*UserFactory(roles=["adjudicator"]).groups.all())
    client.force_login(a.expert)
    body = client.get(reverse("adjudication:queue")).content.decode()
    assert f"#{case.pk}<" not in body


def test_queue_needs_the_adjudicator_role(client):
    client.force_login(UserFactory(roles=["expert"]))
    assert client.get(reverse("adjudication:queue")).status_code == 403


def test_case_page_shows_judgements_anonymised_with_differences_and_spans(
    client, adjudicator, django_assert_max_num_queries
):
    case, (a, b) = disputed(spans=1)
    a.awards, b.awards = {"c1": "2", "c2": "1"}, {"c1": "2", "c2": "0"}
    a.save(), b.save()
    with django_assert_max_num_queries(14):
        response = client.get(reverse("adjudication:case", args=[case.pk]))
    body = response.content.decode()
    assert "Expert A" in body and "Expert B" in body
    assert a.expert.username not in body and b.expert.username not in body
    assert 'class="differs"><td>c2' in body
    assert '<tr class=""><td>c1' in body
    assert 'class="layer-a"' in body or "layer-a layer-b" in body
    assert "layer-b" in body
    assert body.count('id="proof-source"') == 1
    assert f"Problem {case.item.proof.problem.external_id}" in body


def test_case_page_queries_do_not_grow_with_spans(client, adjudicator, django_assert_num_queries):
    few, _ = disputed(spans=1)
    many, _ = disputed(spans=12)
    with CaptureQueriesContext(connection) as first:
        client.get(reverse("adjudication:case", args=[few.pk]))
    with CaptureQueriesContext(connection) as second:
        client.get(reverse("adjudication:case", args=[many.pk]))
    assert len(first) == len(second)


def test_resolving_by_form_accept_and_new_score(client, adjudicator):
    case, (a, b) = disputed()
    response = client.post(
        reverse("adjudication:resolve", args=[case.pk]), {"action": "accept", "grade": b.pk}
    )
    assert response.status_code == 302
    assert FinalLabel.objects.get(item=case.item).value == Decimal("6")

    other, _ = disputed()
    response = client.post(
        reverse("adjudication:resolve", args=[other.pk]),
        {"action": "new_score", "score": "4", "rationale": ""},
        follow=True,
    )
    assert "a new score needs a rationale" in response.content.decode()
    response = client.post(
        reverse("adjudication:resolve", args=[other.pk]),
        {
            "action": "new_score",
            "score": "4",
            "rationale": "Half of the bound is proved.",
            "spans": '[{"start": 0, "end": 4, "category": "other", "note": "n"}]',
        },
    )
    other.refresh_from_db()
    assert (other.status, other.score, other.spans.count()) == ("resolved", Decimal("4"), 1)


def test_an_expert_cannot_reach_the_other_judgement_before_the_case_returns(client, api_client_for):
    case, (a, b) = disputed(scores=(1, 6))
    b.comment = "SECRET-OTHER-COMMENT"
    b.save()
    expert = a.expert
    client.force_login(expert)
    urls = [
        reverse("adjudication:case", args=[case.pk]),
        reverse("adjudication:discussion", args=[case.pk]),
        reverse("adjudication:queue"),
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code in (403, 404), url
        assert b"SECRET-OTHER-COMMENT" not in response.content
    assert f"#{case.pk}<" not in client.get(reverse("adjudication:returned")).content.decode()
    # Guessable: the neighbouring ids answer the same as a missing one.
    assert client.get(reverse("adjudication:discussion", args=[case.pk + 1000])).status_code == 404
    api = api_client_for(expert)
    for url in (f"/api/v1/adjudication/cases/{case.pk}/", "/api/v1/adjudication/cases/"):
        response = api.get(url)
        assert response.status_code in (403, 404), url
        assert b"SECRET-OTHER-COMMENT" not in response.content
    # Even holding the adjudicator role, one's own item's case stays closed.
    expert.groups.add(*UserFactory(roles=["adjudicator"]).groups.all())
    client.force_login(expert)
    assert client.get(reverse("adjudication:case", args=[case.pk])).status_code == 404

    case_return(case=case, user=UserFactory(roles=["adjudicator"]), question="Step 2?")
    response = client.get(reverse("adjudication:discussion", args=[case.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert "SECRET-OTHER-COMMENT" in body and "Step 2?" in body
    assert client.get(reverse("adjudication:returned")).content.decode().count(f"#{case.pk}<") == 1
    client.post(reverse("adjudication:comment", args=[case.pk]), {"text": "It follows."})
    assert case.events.last().text == "It follows."
    # A stranger expert still gets nothing.
    client.force_login(UserFactory(roles=["expert"]))
    assert client.get(reverse("adjudication:discussion", args=[case.pk])).status_code == 404


def test_dashboard_and_csv(client, django_assert_max_num_queries):
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    campaign = CampaignFactory(fast_seconds=100)
    experts = [UserFactory(username=f"exp-{n}", roles=["expert"]) for n in range(3)]
    for scores in [(7, 7, 6), (3, 5, 4), (0, 1, 0), (6, 2, 5)]:
        judge(ItemFactory(campaign=campaign, required_judgements=3), *scores, experts=experts)
    Item.objects.filter(campaign=campaign).update()
    with django_assert_max_num_queries(15):
        response = client.get(reverse("adjudication:dashboard", args=[campaign.slug]))
    body = response.content.decode()
    assert response.status_code == 200
    for section in ('id="overall"', 'id="pairs"', 'id="confusion"', 'id="weeks"', 'id="alpha"'):
        assert section in body
    assert "exp-0 · exp-1" in body and "exp-1 · exp-2" in body

    response = client.get(reverse("adjudication:disagreements_csv", args=[campaign.slug]))
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["difference"] for r in rows] == ["4", "2", "1", "1"]
    assert rows[0]["beyond_tolerance"] == "yes" and rows[0]["case_status"] == "open"
    assert {rows[0]["expert_1"], rows[0]["expert_2"], rows[0]["expert_3"]} == {
        "exp-0",
        "exp-1",
        "exp-2",
    }


def test_the_agreement_pages_long_tables_show_twenty_rows_until_show_all(client):
    """25 fast grades (12 s, under the campaign's 100): the page lists 20 and says how many there are; Show all
    lists every one."""
    client.force_login(UserFactory(roles=["admin"]))
    campaign = CampaignFactory(fast_seconds=100)
    experts = [UserFactory(roles=["expert"]) for _ in range(5)]
    for n in range(5):
        judge(ItemFactory(campaign=campaign, required_judgements=5), *[n % 8] * 5, experts=experts)
    url = reverse("adjudication:dashboard", args=[campaign.slug])
    Grade.objects.filter(item__campaign=campaign).update(seconds_spent=12)
    body = client.get(url).content.decode()
    fast = body[body.index('id="fast"') :]
    assert fast.count("<tr>") == 1 + 20
    assert "The first 20 of 25 fast grades." in body and 'href="?show=all#fast"' in body
    everything = client.get(url, {"show": "all"}).content.decode()
    assert everything[everything.index('id="fast"') :].count("<tr>") == 1 + 25
    assert 'id="fast-more"' not in everything


def test_dashboard_is_for_admins(client, adjudicator):
    campaign = CampaignFactory()
    assert client.get(reverse("adjudication:dashboard", args=[campaign.slug])).status_code == 403
    assert (
        client.get(reverse("adjudication:disagreements_csv", args=[campaign.slug])).status_code
        == 403
    )


def test_labels_page_marks_gold_and_sends_by_hand(client):
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    agreed = ItemFactory()
    judge(agreed, 5, 5)
    pending = ItemFactory(campaign=agreed.campaign)
    response = client.get(reverse("adjudication:labels", args=[agreed.campaign.slug]))
    assert response.status_code == 200
    client.post(reverse("adjudication:gold", args=[agreed.pk]), {"gold": "1"})
    assert Item.objects.get(pk=agreed.pk).is_gold
    response = client.post(
        reverse("adjudication:gold", args=[pending.pk]), {"gold": "1"}, follow=True
    )
    assert "before it can be gold" in response.content.decode()
    assert not Item.objects.get(pk=pending.pk).is_gold
    response = client.post(reverse("adjudication:send", args=[agreed.pk]))
    case = AdjudicationCase.objects.get(item=agreed)
    assert response.url == reverse("adjudication:case", args=[case.pk])
    assert (case.opened_reason, case.status) == ("manual", CaseStatus.OPEN)


def test_admin_assigns_a_case_to_an_eligible_adjudicator(client):
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    case, (a, _) = disputed()
    adjudicator = UserFactory(username="senior", roles=["adjudicator"])
    a.expert.groups.add(*adjudicator.groups.all())
    body = client.get(reverse("adjudication:case", args=[case.pk])).content.decode()
    assert f'<option value="{adjudicator.pk}">senior</option>' in body
    assert f">{a.expert.username}</option>" not in body  # a grader is never offered
    client.post(reverse("adjudication:assign", args=[case.pk]), {"adjudicator": adjudicator.pk})
    case.refresh_from_db()
    assert (case.status, case.assigned_to) == ("assigned", adjudicator)
    response = client.post(
        reverse("adjudication:assign", args=[case.pk]), {"adjudicator": a.expert.pk}, follow=True
    )
    assert "own graders" in response.content.decode()
    assert AdjudicationCase.objects.get(pk=case.pk).assigned_to == adjudicator


def test_adjudicators_take_cases_but_do_not_assign_others(client, adjudicator):
    case, _ = disputed()
    other = UserFactory(roles=["adjudicator"])
    assert (
        client.post(
            reverse("adjudication:assign", args=[case.pk]), {"adjudicator": other.pk}
        ).status_code
        == 403
    )
    client.post(reverse("adjudication:assign", args=[case.pk]), {"adjudicator": "me"})
    assert AdjudicationCase.objects.get(pk=case.pk).assigned_to == adjudicator
    mine = client.get(reverse("adjudication:queue") + "?mine=1").content.decode()
    assert f"#{case.pk}<" in mine


def test_only_admins_send_items_and_mark_gold(client, adjudicator):
    item = ItemFactory()
    judge(item, 4, 4)
    assert client.post(reverse("adjudication:send", args=[item.pk])).status_code == 403
    assert (
        client.post(reverse("adjudication:gold", args=[item.pk]), {"gold": "1"}).status_code == 403
    )
    assert not AdjudicationCase.objects.filter(item=item).exists()


def test_once_the_label_is_final_the_experts_may_read_the_case(client):
    case, (a, b) = disputed()
    b.comment = "OTHER-VIEW"
    b.save()
    client.force_login(a.expert)
    assert client.get(reverse("adjudication:discussion", args=[case.pk])).status_code == 404
    case_resolve(case=case, user=UserFactory(roles=["adjudicator"]), action="accept", grade_id=b.pk)
    response = client.get(reverse("adjudication:discussion", args=[case.pk]))
    assert response.status_code == 200 and "OTHER-VIEW" in response.content.decode()
    assert 'id="reply"' not in response.content.decode()  # the thread is closed


@pytest.mark.parametrize("scale", ["0-7", "1-4", "0-0.5-1"])
def test_agreement_pages_take_mean_labels_between_scale_values(client, scale):
    """The mean policy gives 3.5 on 0-7, 1.5 on 1-4, 0.75 on 0 / 0.5 / 1: bias against such a
    label uses the number, and the dashboard, the labels page and the CSV show it."""
    client.force_login(UserFactory(roles=["admin"]))
    campaign = CampaignFactory(scale=scale, label_policy="mean", tolerance=Decimal("1"))
    low, high = {"0-7": (3, 4), "1-4": (1, 2), "0-0.5-1": (Decimal("0.5"), 1)}[scale]
    experts = [UserFactory(username=f"mean-{n}", roles=["expert"]) for n in range(2)]
    item = ItemFactory(campaign=campaign)
    judge(item, low, high, experts=experts)
    mean = (Decimal(str(low)) + Decimal(str(high))) / 2
    # 0 / 0.5 / 1 agrees only exactly: there the mean comes from an import
    FinalLabel.objects.update_or_create(
        item=item, defaults={"value": mean, "scale": scale, "source": "imported"}
    )
    figures = campaign_agreement(campaign, n_resamples=20)
    bias = {row["name"]: row["bias"] for row in figures.experts}
    assert bias == {
        "mean-0": pytest.approx(float(low - mean)),
        "mean-1": pytest.approx(float(high - mean)),
    }
    for name in ("dashboard", "labels", "disagreements_csv"):
        response = client.get(reverse(f"adjudication:{name}", args=[campaign.slug]))
        assert response.status_code == 200, name
    assert format(mean.normalize(), "f") in response.content.decode()
