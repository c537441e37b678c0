"""After the AI second opinion: the statistic (adjudication.agreement.reveal_changes), its reading
of a campaign (metrics.second_opinion_figures) and the agreement page and API that show it."""

from decimal import Decimal

import pytest

from adjudication.agreement import RevealRow, reveal_changes
from adjudication.metrics import second_opinion_figures
from annotation import services
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.factories import UserFactory
from tests.problems.page_factories import VerifierAnalysisFactory

# ---- the statistic -----------------------------------------------------------------------------


def test_nobody_changed():
    found = reveal_changes([RevealRow(5, None, 3), RevealRow(2, None, 2, final=2)])
    assert (found.revealed, found.changed, found.changed_share) == (2, 0, 0.0)
    assert found.toward_automatic_share is None and found.mean_shift is None
    assert found.with_final == 0 and found.toward_final_share is None


def test_directions_toward_and_away_from_the_automatic_score_and_the_final_label():
    rows = [
        RevealRow(before=5, after=3, automatic=2, final=3),  # toward both
        RevealRow(before=5, after=6, automatic=2, final=3),  # away from both
        RevealRow(before=1, after=4, automatic=3, final=None),  # crossed: 2 then 1 from auto
        RevealRow(before=2, after=4, automatic=3, final=0),  # jumped across: as near; away final
        RevealRow(before=6, after=None, automatic=0, final=6),  # kept
        RevealRow(before=4, after=4, automatic=0, final=6),  # "revised" to the same: no change
    ]
    found = reveal_changes(rows)
    assert found.revealed == 6 and found.changed == 4
    assert found.changed_share == pytest.approx(4 / 6)
    assert (found.toward_automatic, found.away_from_automatic, found.level_with_automatic) == (
        2,
        1,
        1,
    )
    assert found.toward_automatic_share == pytest.approx(0.5)
    assert found.with_final == 3
    assert (found.toward_final, found.away_from_final, found.level_with_final) == (1, 2, 0)
    assert found.mean_shift == pytest.approx((-2 + 1 + 3 + 2) / 4)


def test_empty_and_ternary_steps():
    assert reveal_changes([]).changed_share is None
    found = reveal_changes([RevealRow(Decimal("1"), Decimal("0.5"), Decimal("0.75"))])
    assert found.level_with_automatic == 1  # 0.25 from the mean of the verifiers both times
    found = reveal_changes([RevealRow(Decimal("1"), Decimal("0"), Decimal("0.5"), Decimal("0"))])
    assert (found.level_with_automatic, found.toward_final) == (1, 1)


def test_a_revision_finer_than_the_comparison_scale_is_counted_with_its_size():
    # 0 -> 1 on 0-7 is 0 -> 0 on 0 / 0.5 / 1: a change all the same, as near the automatic score
    rows = [
        RevealRow(before=0, after=0, automatic=1, own_before=0, own_after=1),
        RevealRow(before=1, after=0, automatic=1, own_before=6, own_after=2),
        RevealRow(before=1, after=1, automatic=1, own_before=6, own_after=6),  # same: no change
    ]
    found = reveal_changes(rows)
    assert (found.changed, found.raised, found.lowered) == (2, 1, 1)
    assert (found.level_with_automatic, found.away_from_automatic) == (1, 1)
    assert found.mean_shift == pytest.approx((1 - 4) / 2)
    assert found.mean_size == pytest.approx((1 + 4) / 2)


# ---- a campaign --------------------------------------------------------------------------------


def graded(campaign, item, score):
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    grade = services.grade_submit(
        item=item, expert=expert, data=services.GradeInput.from_data({"score": score})
    )
    services.second_opinion_reveal(grade=grade)
    return expert, grade


@pytest.mark.django_db
def test_campaign_figures_on_the_verifiers_scale(client, api_client_for):
    campaign = CampaignFactory(second_opinion="verifier", tolerance=Decimal("1"))
    items = [ItemFactory(campaign=campaign, scheme=None, required_judgements=2) for _ in range(3)]
    for item, verdict in zip(items, ["0", "1", "0"], strict=True):
        VerifierAnalysisFactory(proof=item.proof, score=Decimal(verdict))
    bare = ItemFactory(campaign=campaign, scheme=None)  # no analysis: nothing to show
    assert second_opinion_figures(campaign) is None
    # item 0: 7 and 3, the verifier says 0; the 7 goes down to 4 -> agreement 3.5 -> 3
    a, grade_a = graded(campaign, items[0], "7")
    graded(campaign, items[0], "3")
    services.second_opinion_revise(grade=grade_a, expert=a, score="4", reason="gap")
    # item 1: 6 and 6, the verifier says 1; one moves to 2, away from it (through the cuts)
    b, grade_b = graded(campaign, items[1], "6")
    graded(campaign, items[1], "6")
    services.second_opinion_revise(grade=grade_b, expert=b, score="2", reason="doubt")
    # item 2: both keep
    graded(campaign, items[2], "5")
    graded(campaign, items[2], "5")
    graded(campaign, bare, "5")
    figures = second_opinion_figures(campaign)
    assert figures.scales == ["0-0.5-1"] and figures.without_opinion == 1
    changes = figures.changes
    assert (changes.revealed, changes.changed) == (6, 2)
    assert (changes.toward_automatic, changes.away_from_automatic) == (1, 1)
    # item 0 is labelled by agreement (7 -> 4 against 3); item 1 went to adjudication (6 vs 2)
    assert changes.with_final == 1 and changes.toward_final == 1

    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    page = client.get(f"/adjudication/campaigns/{campaign.slug}/agreement/").content.decode()
    assert 'id="second-opinion-changes"' in page
    assert 'id="reveal-changed">2<' in page and "33.3%" in page
    body = (
        api_client_for(admin)
        .get(f"/api/v1/adjudication/campaigns/{campaign.slug}/agreement/")
        .json()
    )
    assert body["second_opinion"]["changed"] == 2
    assert body["second_opinion"]["toward_automatic"] == 1
    assert body["second_opinion"]["without_opinion"] == 1


@pytest.mark.django_db
def test_every_revision_counts_on_the_campaigns_own_scale(client, api_client_for):
    campaign = CampaignFactory(second_opinion="verifier")
    item = ItemFactory(campaign=campaign, scheme=None, required_judgements=2)
    VerifierAnalysisFactory(proof=item.proof, score=Decimal("1"))
    a, grade_a = graded(campaign, item, "0")
    services.second_opinion_revise(grade=grade_a, expert=a, score="1", reason="one step holds")
    b, grade_b = graded(campaign, item, "7")
    services.second_opinion_revise(grade=grade_b, expert=b, score="5", reason="a gap")
    changes = second_opinion_figures(campaign).changes
    assert (changes.revealed, changes.changed, changes.raised, changes.lowered) == (2, 2, 1, 1)
    assert changes.mean_size == pytest.approx(1.5)
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    page = client.get(f"/adjudication/campaigns/{campaign.slug}/agreement/").content.decode()
    assert 'id="reveal-changed">2<' in page and 'id="reveal-up-down">1 / 1<' in page
    url = f"/api/v1/adjudication/campaigns/{campaign.slug}/agreement/"
    body = api_client_for(admin).get(url).json()["second_opinion"]
    assert (body["changed"], body["raised"], body["lowered"], body["mean_size"]) == (2, 1, 1, 1.5)


@pytest.mark.django_db
def test_agreement_page_without_reveals_has_no_section(client, api_client_for):
    campaign = CampaignFactory()
    admin = UserFactory(roles=["admin"])
    client.force_login(admin)
    page = client.get(f"/adjudication/campaigns/{campaign.slug}/agreement/").content.decode()
    assert "second-opinion-changes" not in page
    body = (
        api_client_for(admin)
        .get(f"/api/v1/adjudication/campaigns/{campaign.slug}/agreement/")
        .json()
    )
    assert body["second_opinion"] is None
