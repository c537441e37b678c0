"""Browser: grading on a 0-21 campaign (CMO's scale): the final score is a row of numbers,
typed as numbers (two digits in quick succession), clickable and reachable by the keyboard;
the page passes axe; the grade is stored on 0-21."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from annotation.models import Grade
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_0_21_score_is_typed_clicked_and_submitted(
    page, live_server, login, screenshot_dir, assert_accessible
):
    campaign = CampaignFactory(name="CMO round", scale="0-21", tolerance=Decimal(3))
    item = ItemFactory(campaign=campaign, proof__text="Since $x^2 \\ge 0$, the claim holds.")
    expert = expert_in(campaign, "cmo-grader")
    login(page, expert)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#proof-text .katex")
    numbers = page.locator("#score-row .score-number")
    expect(numbers).to_have_count(22)
    assert numbers.first.inner_text() == "0" and numbers.last.inner_text() == "21"

    def chosen():
        return page.locator("input[name=score]:checked").get_attribute("value")

    page.keyboard.press("1")
    page.keyboard.press("5")
    assert chosen() == "15"  # 1 then 5 in quick succession
    page.keyboard.press("9")
    assert chosen() == "9"  # no 159: a new score
    page.wait_for_timeout(1000)
    page.keyboard.press("2")
    assert chosen() == "2"
    page.wait_for_timeout(1000)
    page.keyboard.press("2")
    page.keyboard.press("1")
    assert chosen() == "21"
    numbers.filter(has_text="17").click()
    assert chosen() == "17"
    # the radios are one group: arrow keys move the choice
    page.locator("input[name=score][value='17']").focus()
    page.keyboard.press("ArrowRight")
    assert chosen() == "18"
    page.screenshot(path=str(screenshot_dir / "grading-0-21.png"), full_page=True)
    assert_accessible(page)
    page.locator("#proof-text").click()  # leave the radio group, as the keys want
    page.keyboard.press("Enter")
    page.wait_for_selector("text=No work left in CMO round")
    grade = Grade.objects.get(item=item, expert=expert)
    assert grade.status == "submitted" and grade.score == Decimal(18)
