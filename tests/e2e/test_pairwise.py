"""The pair page in the browser: judge with the keyboard only (a / b / t, r for a reason, Esc,
Enter), nothing of the models in the page, a double click on Submit sends one judgement, and
the back button shows the judged pair as the server has it."""

import pytest
from playwright.sync_api import expect

from annotation.models import PairJudgement
from tests.annotation.pair_factories import pairwise_campaign

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GENERATORS = ("gen-zqmark-one", "gen-zqmark-two", "gen-zqmark-three")


@pytest.fixture
def pairs_setup(transactional_db):
    campaign, proofs, (one, two) = pairwise_campaign(
        generators=GENERATORS, name="Pair round", guidelines="Prefer the **complete** proof."
    )
    return campaign, proofs, one


def _open_next(page, live_server, campaign):
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")  # the pairs page, by redirect
    page.wait_for_selector("#pair-next")
    page.keyboard.press("n")
    page.wait_for_selector("#pair-form")


def _blind(page):
    html = page.content()
    assert "zqmark" not in html and "gen-" not in html


def _expected(judgement, shown):
    if shown == "tie":
        return "tie"
    return "a" if (shown == "left") == judgement.a_on_left else "b"


def test_judge_pairs_with_the_keyboard_only(
    page, live_server, login, pairs_setup, screenshot_dir, assert_accessible
):
    campaign, _, expert = pairs_setup
    login(page, expert)
    _open_next(page, live_server, campaign)
    _blind(page)
    assert page.locator("#proof-left .prose").inner_text().startswith("Proof of 0")
    page.screenshot(path=str(screenshot_dir / "pair-page.png"), full_page=True)
    assert_accessible(page)
    first = page.url
    page.keyboard.press("Enter")  # no choice yet: the browser asks for one, nothing is sent
    assert page.url == first
    page.keyboard.press("a")
    page.keyboard.press("b")  # the last key pressed is the choice
    assert page.locator("input[value=right]").is_checked()
    page.keyboard.press("r")
    page.keyboard.type("a tab of b")  # letters typed in the reason choose nothing
    page.keyboard.press("Escape")
    assert page.locator("input[value=right]").is_checked()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != first)
    page.wait_for_selector("#pair-form")
    judged = PairJudgement.objects.get(expert=expert, status="submitted")
    assert judged.choice == _expected(judged, "right") and judged.reason == "a tab of b"
    # the second pair: t, then Ctrl+Enter from the reason
    _blind(page)
    second = page.url
    page.keyboard.press("t")
    page.keyboard.press("r")
    page.keyboard.type("both complete")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda url: url != second)
    assert PairJudgement.objects.filter(expert=expert, status="submitted").count() == 2
    # the third: skip it with x, then there is nothing else left for now
    page.wait_for_selector("#pair-form")
    page.keyboard.press("x")
    page.wait_for_selector("#no-pairs")
    assert_accessible(page)


def test_a_double_click_sends_one_judgement_and_back_shows_it(
    page, live_server, login, pairs_setup
):
    campaign, _, expert = pairs_setup
    login(page, expert)
    _open_next(page, live_server, campaign)
    first = page.url
    page.keyboard.press("a")
    page.dblclick("#pair-submit")
    page.wait_for_url(lambda url: url != first)
    page.wait_for_selector("#pair-form")
    submitted = PairJudgement.objects.filter(expert=expert, status="submitted")
    assert submitted.count() == 1  # the next pair was not judged by the second click
    judgement = submitted.get()
    assert judgement.choice == _expected(judgement, "left")
    assert PairJudgement.objects.filter(expert=expert, status="active").count() == 1
    page.go_back()
    expect(page.locator("#submitted-notice")).to_contain_text("A is better")
    assert page.url == first and page.locator("input[value=left]").is_checked()
    _blind(page)
    # changing it while the pair is not final is a revision of the same judgement
    page.keyboard.press("t")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != first)
    judgement.refresh_from_db()
    assert judgement.choice == "tie"
    assert PairJudgement.objects.filter(expert=expert, status="submitted").count() == 1
