"""Browser flows of how a judgement is written: fast rubric keys under a slow network store what
the keys chose, a second tab that is behind is told the grade was already submitted and may
revise it, and a session that ends mid-grade loses nothing."""

import re
import time
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from annotation.models import Grade
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Every draft's answer reaches the page late (the server saved it at once): the page's computed
# total lags the keys by this much.
SLOW_DRAFTS = """
(() => {
  const fetch = window.fetch;
  window.fetch = (url, options) => {
    const answer = fetch(url, options);
    if (!/\\/draft\\/$/.test(String(url))) return answer;
    return answer.then((resp) => new Promise((done) => setTimeout(() => done(resp), 900)));
  };
})();
"""


def open_first(page, live_server, campaign):
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#proof-text .katex, #proof-text p")
    expect(page.locator("#computed-score")).not_to_have_text("\u2013")


def press(page, keys, gap_ms):
    for key in keys:
        page.keyboard.press(key)
        time.sleep(gap_ms / 1000)


def test_fast_rubric_keys_then_enter_store_what_the_keys_chose(
    page, live_server, login, screenshot_dir, assert_accessible
):
    """80, 150 and 250 ms between keys, drafts answered 900 ms late: each Enter submits the
    awards the keys gave and the score they compute, never a total from a late draft, and with
    no override. A key per checkpoint gives its full points (again: clears), = gives them all;
    digits give the checkpoint last keyed partial points."""
    campaign = CampaignFactory(name="Fast round")
    items = [ItemFactory(campaign=campaign) for _ in range(4)]
    expert = expert_in(campaign, "fast-grader")
    page.add_init_script(SLOW_DRAFTS)
    login(page, expert)
    open_first(page, live_server, campaign)
    assert [
        page.inner_text(f".cp-row[data-id='{cp}'] kbd.cp-key") for cp in ["c1", "c2", "c3"]
    ] == [
        "a",
        "s",
        "d",
    ]
    page.screenshot(path=str(screenshot_dir / "grading-rubric-keys.png"), full_page=True)
    assert_accessible(page)
    runs = [
        (80, ["a", "s", "d"], {"c1": "2", "c2": "3", "c3": "2"}, 7),  # n + 1 keys for n at full
        (80, ["=", "d"], {"c1": "2", "c2": "3"}, 5),  # all full marks, then c3 cleared
        (150, ["a", "s", "1"], {"c1": "2", "c2": "1"}, 3),  # c2 keyed, then 1 point
        (250, ["s", "d", "a", "0"], {"c1": "0", "c2": "3", "c3": "2"}, 5),
    ]
    for number, (gap, keys, _, _) in enumerate(runs):
        before = page.url
        press(page, keys + ["Enter"], gap)
        page.wait_for_url(lambda url, before=before: url != before)
        if number < len(runs) - 1:
            expect(page.locator("#computed-score")).to_have_text("0")
    page.wait_for_selector("text=No work left in Fast round")
    grades = {g.item_id: g for g in Grade.objects.filter(item__in=items, expert=expert)}
    stored = [(g.awards, g.score, g.computed_score, g.score_note) for g in grades.values()]
    wanted = [(awards, Decimal(score), Decimal(score), "") for _, _, awards, score in runs]
    assert sorted(stored, key=str) == sorted(wanted, key=str)
    assert all(g.status == "submitted" for g in grades.values())


def test_a_second_tab_is_told_the_grade_was_submitted_and_may_revise(
    context, live_server, login, screenshot_dir, assert_accessible
):
    campaign = CampaignFactory(name="Two tabs")
    item = ItemFactory(campaign=campaign, required_judgements=2)
    expert = expert_in(campaign, "two-tabs")
    first = context.new_page()
    login(first, expert)
    open_first(first, live_server, campaign)
    second = context.new_page()
    second.goto(first.url)
    expect(second.locator("#computed-score")).to_have_text("0")
    press(first, ["=", "Enter"], 50)
    first.wait_for_selector("text=No work left in Two tabs")
    assert Grade.objects.get(item=item).score == 7

    second.bring_to_front()
    press(second, ["a", "Enter"], 100)  # the stale tab chose 2 and submits
    # the checklist's total comes from the server: the question names it once it is known
    expect(second.locator("#item-notice")).to_contain_text(
        "Already submitted as 7 in another tab; you now chose 2: revise to 2?"
    )
    assert Grade.objects.get(item=item).score == 7  # nothing silently dropped or overwritten
    second.screenshot(path=str(screenshot_dir / "grading-already-submitted.png"), full_page=True)
    assert_accessible(second)
    second.click("#revise-to-mine")
    expect(second.locator("#save-status")).to_have_text(re.compile(r"^Revision\ saved"))
    grade = Grade.objects.get(item=item)
    assert (grade.score, grade.awards, grade.revisions.count()) == (2, {"c1": "2"}, 1)


def test_a_session_that_ends_mid_grade_loses_nothing(
    context, live_server, login, screenshot_dir, assert_accessible
):
    """The session cookie goes; the expert chooses and submits: the page says the session ended
    and offers a log-in in a new tab; after logging in there, the page sends again with the
    fresh CSRF token and the stored grade is the choice."""
    campaign = CampaignFactory(name="Long night")
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign, "night-grader")
    page = context.new_page()
    login(page, expert)
    open_first(page, live_server, campaign)
    context.clear_cookies(name="sessionid")
    press(page, ["a", "s", "Enter"], 100)
    page.wait_for_selector("#item-notice:not([hidden])")
    assert "Your session ended" in page.inner_text("#item-notice")
    assert page.inner_text("#save-status") == "Not saved: your session ended"
    page.screenshot(path=str(screenshot_dir / "grading-session-ended.png"), full_page=True)
    assert_accessible(page)
    assert not Grade.objects.filter(item=item, status="submitted").exists()
    # the choices wait in this browser
    kept = page.evaluate(
        "() => JSON.parse(localStorage.getItem(document.getElementById('grading').dataset.storeKey))"
    )
    assert kept["body"]["awards"] == {"c1": "2", "c2": "3"}

    with page.expect_popup() as opened:
        page.click("#login-again")
    tab = opened.value
    tab.fill("#id_username", expert.username)
    tab.fill("#id_password", "pass-word-123")
    tab.click("button[type=submit]")
    tab.wait_for_url(f"{live_server.url}/")
    tab.close()
    page.click("#send-again")
    page.wait_for_selector("text=No work left in Long night")
    grade = Grade.objects.get(item=item)
    assert (grade.status, grade.awards, grade.score) == ("submitted", {"c1": "2", "c2": "3"}, 5)
    assert (
        page.evaluate(
            "() => Object.keys(localStorage).filter((k) => k !== 'proofmark:browser').length"
        )
        == 0
    )
