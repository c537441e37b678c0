"""Browser flows of a judgement whose answer is lost or late, on the grading and the analysis
review page: the expert submits, the server stores it, the answer never arrives (or arrives
late); the expert changes their choice and presses Enter. The stored judgement is what the
expert last chose, or the page asks, saying plainly what happened ("Your submission of 5 was
stored; you now chose 6: revise to 6?"); nothing moves on silently with the old score."""

import re
import time

import pytest
from playwright.sync_api import expect

from annotation.models import Grade
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.metaverify.factories import analysis_item, review_campaign

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": (1366, 900), "tablet": (1024, 768), "phone": (390, 844)}


def shots(page, directory, name):
    """The page as it is now at desktop, tablet and phone sizes, the notice in view."""
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        page.locator("#item-notice").scroll_into_view_if_needed()
        page.screenshot(path=str(directory / f"{name}-{size}.png"))
    page.set_viewport_size({"width": 1366, "height": 900})


def open_first(page, live_server, campaign):
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#proof-text p")
    expect(page.locator("#computed-score")).not_to_have_text("\u2013")


def submitted(item):
    return Grade.objects.filter(item=item, status="submitted").first()


def lose_a_submission_of_5(page, item):
    """The expert submits 5 (the final score, holistic); the server stores it, its answer is
    lost on the way back."""
    page.evaluate("__network.lose('POST', '/submit/$')")
    page.keyboard.press("5")
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_contain_text("No answer from the server")
    assert submitted(item).score == 5  # stored, though the page never heard it


def revise_by_enter(page, *, shots_of, check):
    """The question on screen (screenshot at three sizes, checked for accessibility): Enter goes
    to it, not past it; Enter again on its button revises."""
    shots(page, *shots_of)
    check(page)
    page.keyboard.press("Enter")
    expect(page.locator("#revise-to-mine")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^Revision saved"))


@pytest.fixture
def grading(page, live_server, login, flaky_network):
    campaign = CampaignFactory(name="Flaky night")
    items = [ItemFactory(campaign=campaign) for _ in range(2)]
    flaky_network(page)
    login(page, expert_in(campaign, "flaky-grader"))
    open_first(page, live_server, campaign)
    assert page.url.endswith(f"/annotation/items/{items[0].pk}/")
    return items


def test_a_lost_answer_then_a_change_and_enter_asks_and_revises(
    page, grading, screenshot_dir, assert_accessible
):
    item = grading[0]
    here = page.url
    lose_a_submission_of_5(page, item)
    page.keyboard.press("6")
    page.keyboard.press("Enter")
    expect(page.locator("#item-notice")).to_contain_text(
        "Your submission of 5 was stored; you now chose 6: revise to 6?"
    )
    expect(page.locator("#revise-to-mine")).to_have_text("Revise to 6")
    expect(page.locator("#keep-stored")).to_have_text("Keep 5 and go on")
    assert page.url == here and submitted(item).score == 5  # nothing moved on, nothing sent
    revise_by_enter(page, shots_of=(screenshot_dir, "grading-lost-answer"), check=assert_accessible)
    grade = submitted(item)
    assert (grade.score, grade.revisions.count()) == (6, 1)


def test_a_lost_answer_a_pause_and_a_change_ask_first_and_keep_the_stored_grade(page, grading):
    """After a pause the change alone (its draft) asks the server first: the page says what was
    stored at once, and "keep 5" goes on to the next item with 5 stored."""
    item = grading[0]
    lose_a_submission_of_5(page, item)
    time.sleep(1.5)
    page.keyboard.press("6")
    expect(page.locator("#item-notice")).to_contain_text(
        "Your submission of 5 was stored; you now chose 6: revise to 6?"
    )
    assert "another tab" not in page.inner_text("#item-notice")
    page.keyboard.press("Enter")  # Enter while it asks: the question takes it
    expect(page.locator("#revise-to-mine")).to_be_focused()
    page.click("#keep-stored")
    page.wait_for_url(f"**/annotation/items/{grading[1].pk}/")
    grade = submitted(item)
    assert (grade.score, grade.revisions.count()) == (5, 0)


def test_a_lost_answer_a_change_and_a_reload_keep_the_change_and_ask_again(page, grading):
    """The expert changes 5 to 6 after the lost answer and reloads before anything is sent: the
    page (now the submitted grade, read-only) keeps the 6 and asks again; revising asks once
    more on the revise page, and Enter revises to 6."""
    item = grading[0]
    here = page.url
    lose_a_submission_of_5(page, item)
    page.keyboard.press("6")
    page.reload()
    page.wait_for_selector("#proof-text p")
    notice = page.locator("#item-notice")
    expect(notice).to_contain_text("Your submission of 5 was stored; you then chose 6")
    expect(page.locator("#revise-to-mine")).to_have_text("Revise to 6")
    assert submitted(item).score == 5 and page.url == here
    page.click("#revise-to-mine")
    page.wait_for_url("**?revise=1")
    expect(notice).to_contain_text("Your submission of 5 was stored; you now chose 6: revise to 6?")
    page.keyboard.press("Enter")
    expect(page.locator("#revise-to-mine")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^Revision saved"))
    grade = submitted(item)
    assert (grade.score, grade.revisions.count()) == (6, 1)


def test_a_lost_answer_and_a_reload_with_no_change_ask_nothing(page, grading):
    """Nothing chosen after the lost submission: the reload shows the submitted grade, no
    question, and nothing kept."""
    item = grading[0]
    lose_a_submission_of_5(page, item)
    page.reload()
    page.wait_for_selector("#proof-text p")
    expect(page.locator("#revise-link")).to_be_visible()
    assert page.locator("#item-notice:visible").count() == 0
    assert submitted(item).score == 5


def test_a_lost_answer_and_no_change_goes_on(page, grading):
    """Submit pressed again with the same choice: the page asks, finds its submission stored
    and goes on, as if the answer had come."""
    item = grading[0]
    lose_a_submission_of_5(page, item)
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/annotation/items/{grading[1].pk}/")
    grade = submitted(item)
    assert (grade.score, grade.version) == (5, 1)


def test_a_change_while_the_submission_is_held_back_is_asked_about(page, grading):
    """The server answers 1.5 s late; meanwhile the expert chose 6 and pressed Enter: the
    answer (5 stored) does not move the page on, it asks."""
    item = grading[0]
    page.evaluate("__network.hold('POST', '/submit/$', 1500)")
    page.keyboard.press("5")
    page.keyboard.press("Enter")
    page.keyboard.press("6")
    page.keyboard.press("Enter")
    expect(page.locator("#item-notice")).to_contain_text(
        "Your submission of 5 was stored; you now chose 6: revise to 6?"
    )
    assert submitted(item).score == 5
    page.click("#revise-to-mine")
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^Revision saved"))
    assert submitted(item).score == 6


def test_a_lost_review_answer_then_a_change_and_enter_asks(
    page, live_server, login, flaky_network, screenshot_dir, assert_accessible
):
    campaign = review_campaign(name="Flaky reviews")
    item = analysis_item(campaign)
    analysis_item(campaign)
    flaky_network(page)
    login(page, expert_in(campaign, "flaky-reviewer"))
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#analysis-text")
    assert page.url.endswith(f"/annotation/items/{item.pk}/")
    page.check("input[name=expression_error][value=false]")
    page.check("input[name=score_fits][value=true]")
    expect(page.locator("#derived-rating")).to_have_text("1")
    page.evaluate("__network.lose('POST', '/review/$')")
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_contain_text("No answer from the server")
    assert submitted(item).score == 1
    page.check("input[name=score_fits][value=false]")  # now 0.5
    page.keyboard.press("Enter")
    expect(page.locator("#item-notice")).to_contain_text(
        "Your submission of 1 was stored; you now chose 0.5: revise to 0.5?"
    )
    assert submitted(item).score == 1
    revise_by_enter(page, shots_of=(screenshot_dir, "review-lost-answer"), check=assert_accessible)
    grade = submitted(item)
    assert (grade.score, grade.meta_review.score_fits) == (0.5, False)
