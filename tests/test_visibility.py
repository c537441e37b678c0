"""Data stays with those allowed to see it: export jobs, agreement figures (page and API apply
one rule), items of a campaign an expert was removed from."""

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import CampaignMember
from exports.models import ExportJob
from exports.services import export_create
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_export_jobs_are_read_by_their_creator_and_admins_only(api_client_for, admin_user):
    campaign = CampaignFactory()
    alice = UserFactory(roles=["researcher"])
    bob = UserFactory(roles=["researcher"])
    job = export_create(
        user=alice, campaign=campaign, fmt="proofbench", file_type="jsonl", filters={}
    )
    named = ExportJob.objects.create(
        campaign=campaign, format="proofbench", file_type="jsonl",
        filters={"expert_names": True}, created_by=alice,
    )  # fmt: skip
    url = f"/api/v1/exports/{job.pk}/"
    assert api_client_for(alice).get(url).status_code == 200
    assert api_client_for(bob).get(url).status_code == 404
    assert api_client_for(admin_user).get(url).status_code == 200
    assert api_client_for(alice).get(f"/api/v1/exports/{named.pk}/").status_code == 404
    assert api_client_for(admin_user).get(f"/api/v1/exports/{named.pk}/").status_code == 200


def test_an_expert_who_researches_exports_final_items_only():
    campaign = CampaignFactory()
    both = UserFactory(roles=["researcher", "expert"])
    job = export_create(
        user=both, campaign=campaign, fmt="annotations", file_type="jsonl", filters={}
    )
    assert job.filters["final_only"] is True
    researcher = UserFactory(roles=["researcher"])
    job = export_create(
        user=researcher, campaign=campaign, fmt="annotations", file_type="jsonl", filters={}
    )
    assert job.filters["final_only"] is False


def test_agreement_page_and_api_apply_the_same_rule(client, api_client_for, admin_user):
    campaign = CampaignFactory()
    researcher = UserFactory(roles=["researcher"])
    grader = expert_in(campaign)
    grader.groups.add(*UserFactory(roles=["researcher"]).groups.all())
    adjudicator = UserFactory(roles=["adjudicator"])
    page = reverse("adjudication:dashboard", args=[campaign.slug])
    api = f"/api/v1/adjudication/campaigns/{campaign.slug}/agreement/"
    for user, allowed in [
        (admin_user, True), (researcher, True), (grader, False), (adjudicator, False),
    ]:  # fmt: skip
        client.force_login(user)
        assert (client.get(page).status_code == 200) is allowed, user
        assert (api_client_for(user).get(api).status_code == 200) is allowed, user


def test_an_expert_removed_from_a_campaign_loses_its_items(client):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    client.force_login(expert)
    page = reverse("annotation:item", args=[item.pk])
    assert client.get(page).status_code == 200
    CampaignMember.objects.filter(campaign=campaign, user=expert).delete()
    assert client.get(page).status_code == 404


def _fresh(user):
    """The user as the next request reads them (no answer kept from an earlier one)."""
    return type(user).objects.get(pk=user.pk)


def test_the_proofs_held_blind_are_the_ungraded_items_of_open_campaigns_one_grades_in():
    from decimal import Decimal

    from annotation.models import CampaignStatus
    from annotation.services.grade_checks import GradeInput
    from core.visibility import blind_among, blind_to_proof, holds_blind_work

    campaign = CampaignFactory()
    lead = expert_in(campaign)
    lead.groups.add(*UserFactory(roles=["admin", "researcher"]).groups.all())
    held, graded = ItemFactory(campaign=campaign), ItemFactory(campaign=campaign)
    elsewhere = ItemFactory()  # a campaign they are not an expert of
    CampaignMember.objects.create(campaign=elsewhere.campaign, user=lead, role="adjudicator")
    taken = services.assignment_next(campaign=campaign, expert=lead)
    item, other = (held, graded) if taken.item_id == held.pk else (graded, held)
    services.grade_submit(item=item, expert=lead, data=GradeInput(score=Decimal("3")))
    lead = _fresh(lead)
    assert holds_blind_work(lead)
    assert blind_among(lead, [held.proof_id, graded.proof_id, elsewhere.proof_id]) == {
        other.proof_id
    }
    assert not blind_to_proof(lead, elsewhere.proof_id)
    # a campaign that closes ends its blindness
    campaign.status = CampaignStatus.CLOSED
    campaign.save(update_fields=["status"])
    assert not holds_blind_work(_fresh(lead))
    # an expert alone is blind to every proof, held or not
    assert blind_to_proof(UserFactory(roles=["expert"]), elsewhere.proof_id)


def test_an_admin_who_grades_sees_no_revision_of_an_item_they_hold(client):
    from annotation.models import Grade, GradeRevision

    campaign = CampaignFactory()
    lead = expert_in(campaign)
    lead.groups.add(*UserFactory(roles=["admin"]).groups.all())
    held = ItemFactory(campaign=campaign, required_judgements=2)
    other = expert_in(campaign)
    grade = Grade.objects.create(item=held, expert=other, status="submitted", score=3)
    GradeRevision.objects.create(
        grade=grade, changed_by=other, old={"score": "3"}, new={"score": "4", "comment": "x"}
    )
    client.force_login(lead)
    url = reverse("annotation:campaign", args=[campaign.slug])
    assert f'href="/annotation/items/{held.pk}/"' not in client.get(url).content.decode()
    Grade.objects.create(item=held, expert=lead, status="submitted", score=5)
    assert f'href="/annotation/items/{held.pk}/"' in client.get(url).content.decode()
