"""Browser flows of the AI second opinion: nothing automatic before the submission; after it the
page reveals the verifier's score and analysis (typeset), and the expert revises once, with a
reason. Slips: Enter in the reason field, no reason, a double click on "Revise once", the back
button after revising, a revision once the item is final, another expert's session, a proof
with no automatic opinion."""

from decimal import Decimal

import pytest

from annotation import services
from annotation.models import Grade, GradeRevision, SecondOpinion
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.factories import UserFactory
from tests.problems.page_factories import VerifierAnalysisFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

MARKER = "The bound in lemma two fails for negative inputs"
ANALYSIS = (
    "Here is my evaluation of the solution:\n\n"
    f"{MARKER}: the step $$\\sum_{{k=1}}^{{n}} k^2 \\le n^3$$ is asserted without proof, and "
    "$x \\ge 0$ is never checked.\n\n"
    "Based on my evaluation, the final overall score should be: \\boxed{0.5}"
)


@pytest.fixture
def reveal_setup(transactional_db):
    campaign = CampaignFactory(name="Second opinion round", second_opinion="verifier")
    with_opinion = ItemFactory(campaign=campaign, scheme=None)
    VerifierAnalysisFactory(
        proof=with_opinion.proof, score=Decimal("0.5"), text=ANALYSIS, verifier="dsm-v2"
    )
    VerifierAnalysisFactory(proof=with_opinion.proof, score=Decimal("0"), verifier="dsm-v2")
    without = ItemFactory(campaign=campaign, scheme=None)
    expert = expert_in(campaign, "revealed-e2e")
    return campaign, with_opinion, without, expert


def grade_next_and_submit(page, live_server, campaign, key="6"):
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#proof-text")
    assert MARKER not in page.content()  # no anchoring: nothing automatic before submitting
    assert page.locator("#second-opinion").count() == 0
    page.keyboard.press(key)
    page.keyboard.press("Enter")


def test_reveal_after_submission_then_revise_once_with_a_reason(
    page, live_server, login, reveal_setup, screenshot_dir, assert_accessible
):
    campaign, item, without, expert = reveal_setup
    login(page, expert)
    grade_next_and_submit(page, live_server, campaign)
    page.wait_for_selector("#auto-score")
    assert page.url == f"{live_server.url}/annotation/items/{item.pk}/"
    assert page.locator("#auto-score").inner_text() == "0.25"  # mean of 0.5 and 0
    assert page.locator("#score-before").inner_text() == "6"
    assert MARKER in page.locator("#second-opinion").inner_text()
    page.wait_for_selector("#second-opinion .katex-display")
    assert page.locator("#second-opinion .katex-error, #second-opinion .math-error").count() == 0
    assert page.locator("#revise-link").count() == 0  # the panel's revision replaces it
    page.locator("#second-opinion").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "second-opinion-revealed.png"))
    assert_accessible(page)

    # no reason: refused in the panel, nothing recorded
    page.check("input[name=revised_score][value='4']")
    page.click("#revise-button")
    page.wait_for_selector("#second-opinion-error")
    assert "say why" in page.locator("#second-opinion-error").inner_text()
    assert page.evaluate("document.activeElement.id") == "revise-reason"
    # Enter in the reason field is a new line, not a submission (of the panel or the grade)
    page.check("input[name=revised_score][value='4']")
    page.fill("#revise-reason", "Lemma two fails for negative inputs")
    page.focus("#revise-reason")
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.type("and I missed it.")
    assert SecondOpinion.objects.get(grade__item=item).score_after is None
    assert page.locator("#revise-reason").input_value().endswith("\nand I missed it.")
    page.screenshot(path=str(screenshot_dir / "second-opinion-revising.png"))
    # a double click on "Revise once" revises once
    page.dblclick("#revise-button")
    page.wait_for_selector("#score-after")
    assert page.locator("#second-opinion-error").count() == 0
    row = SecondOpinion.objects.get(grade__item=item)
    assert (row.score_before, row.score_after) == (Decimal("6"), Decimal("4"))
    assert row.reason == "Lemma two fails for negative inputs\nand I missed it."
    assert GradeRevision.objects.filter(grade__item=item).count() == 1
    assert Grade.objects.get(item=item, expert=expert).score == Decimal("4")
    assert page.locator("#second-opinion-form").count() == 0
    page.screenshot(path=str(screenshot_dir / "second-opinion-revised.png"))
    assert_accessible(page)

    # on to the next item (no opinion for it), then back: the revised state, no form
    page.keyboard.press("n")
    page.wait_for_url(f"{live_server.url}/annotation/items/{without.pk}/")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_selector("#second-opinion-none")
    assert "No automatic opinion exists" in page.locator("#second-opinion").inner_text()
    assert page.locator("#second-opinion-form").count() == 0
    page.screenshot(path=str(screenshot_dir / "second-opinion-none.png"))
    assert_accessible(page)
    item_url = f"{live_server.url}/annotation/items/{item.pk}/"
    page.goto(item_url)
    page.wait_for_selector("#score-after")
    page.keyboard.press("n")
    page.wait_for_url(lambda url: url != item_url)
    page.wait_for_load_state()
    page.go_back()
    page.wait_for_selector("#score-after")
    assert page.locator("#second-opinion-form").count() == 0
    assert "one revision" not in page.content()


def test_revise_after_the_item_became_final_and_from_another_session(
    page, context, browser, live_server, login, reveal_setup
):
    campaign, item, _, expert = reveal_setup
    login(page, expert)
    grade_next_and_submit(page, live_server, campaign, key="5")
    page.wait_for_selector("#revise-button")
    services.item_finalize(item_id=item.pk)  # an adjudicator settled it meanwhile
    page.check("input[name=revised_score][value='2']")
    page.fill("#revise-reason", "The verifier is right.")
    page.click("#revise-button")
    page.wait_for_selector("#second-opinion-error")
    assert "final" in page.locator("#second-opinion-error").inner_text()
    assert Grade.objects.get(item=item, expert=expert).score == Decimal("5")
    assert page.locator("#revise-button").count() == 0

    other = expert_in(campaign, "other-e2e")
    other_context = browser.new_context(viewport={"width": 1366, "height": 900})
    other_page = other_context.new_page()
    other_page.goto(f"{live_server.url}/accounts/login/")
    other_page.fill("#id_username", other.username)
    other_page.fill("#id_password", "pass-word-123")
    other_page.click("button[type=submit]")
    other_page.wait_for_url(f"{live_server.url}/")
    response = other_page.goto(f"{live_server.url}/annotation/items/{item.pk}/second-opinion/")
    assert response.status == 404
    assert MARKER not in other_page.content()
    other_context.close()


def test_agreement_page_shows_the_changes_and_the_panel_has_a_page_of_its_own(
    page, live_server, login, reveal_setup, screenshot_dir, assert_accessible
):
    campaign, item, without, expert = reveal_setup
    for target, score in ((item, "7"), (without, "3")):
        services.assignment_next(campaign=campaign, expert=expert)
        grade = services.grade_submit(
            item=target, expert=expert, data=services.GradeInput.from_data({"score": score})
        )
        services.second_opinion_reveal(grade=grade)
    services.second_opinion_revise(
        grade=Grade.objects.get(item=item), expert=expert, score="2", reason="The gap is real."
    )
    login(page, expert)
    page.goto(f"{live_server.url}/annotation/items/{item.pk}/second-opinion/")
    assert page.locator("#score-after").inner_text() == "2"
    page.wait_for_selector("#second-opinion .katex-display")
    page.screenshot(path=str(screenshot_dir / "second-opinion-page.png"), full_page=True)
    assert_accessible(page)

    admin = UserFactory(roles=["admin"], username="admin-e2e")
    page.click("form.logout button[type=submit]")
    login(page, admin)
    page.goto(f"{live_server.url}/adjudication/campaigns/{campaign.slug}/agreement/")
    section = page.locator("#second-opinion-changes")
    assert page.locator("#reveal-changed").inner_text() == "1"
    assert page.locator("#reveal-toward-auto").inner_text() == "1"
    assert page.locator("#reveal-up-down").inner_text() == "0 / 1"  # 7 -> 2 on 0-7
    assert "and 1 with none to show" in section.inner_text()
    section.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "second-opinion-agreement.png"))
    assert_accessible(page)


def test_the_reveal_and_the_revision_run_under_the_policy(
    strict_page, live_server, login, reveal_setup
):
    campaign, item, _, expert = reveal_setup
    page = strict_page
    login(page, expert)
    grade_next_and_submit(page, live_server, campaign, key="7")
    page.wait_for_selector("#second-opinion .katex-display")
    page.check("input[name=revised_score][value='3']")
    page.fill("#revise-reason", "Under the policy too.")
    page.click("#revise-button")
    page.wait_for_selector("#score-after")
    assert SecondOpinion.objects.get(grade__item=item).score_after == Decimal("3")
    assert page.csp_errors == []
