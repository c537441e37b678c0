"""Grading on a tablet and a phone, with touch: at 390 x 844 the proof reads at the screen's full
width and the scoring pane is a panel that opens and closes over it; at 1024 x 768 every control
of the scoring pane is at least 24 x 24 px (WCAG 2.2, target size); a checklist item and a band
item are graded by tapping at both sizes."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from annotation.models import Grade
from tests.e2e import test_band_grading, test_grading_page

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE, TABLET = (390, 844), (1024, 768)
LONG_PROOF = test_grading_page.LONG_PROOF
# the two pages' fixtures: a checklist item, a band item
graded_setup = test_grading_page.graded_setup
band_setup = test_band_grading.band_setup

MEASURE = """() => {
  const proof = document.querySelector('#proof-text').getBoundingClientRect();
  const small = [];
  for (const el of document.querySelectorAll('.scoring input, .scoring button, .scoring select, .scoring textarea, .scoring label.level, .scoring summary')) {
    const target = el.closest('label') || el;
    const r = target.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.width < 24 || r.height < 24) small.push(`${el.tagName.toLowerCase()}[name=${el.name || ''}] ${Math.round(r.width)}x${Math.round(r.height)}`);
  }
  return {proof: proof.width, page: document.documentElement.scrollHeight,
          scroll: document.documentElement.scrollWidth, small};
}"""


@pytest.fixture
def touch(browser):
    def make(size):
        context = browser.new_context(
            viewport={"width": size[0], "height": size[1]}, has_touch=True, is_mobile=True,
            bypass_csp=True,
        )  # fmt: skip
        context.set_default_timeout(15_000)
        made.append(context)
        return context.new_page()

    made = []
    yield make
    for context in made:
        context.close()


def open_on(touch, size, live_server, login, campaign, expert):
    page = touch(size)
    login(page, expert)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.locator("button:has-text('Grade next')").tap()
    page.wait_for_selector("#proof-text .katex")
    expect(page.locator("#computed-score")).not_to_have_text("\u2013")
    return page


def test_a_checklist_item_on_a_phone_the_panel_opens_closes_and_submits(
    touch,
    live_server,
    login,
    graded_setup,
    screenshot_dir,
):
    campaign, item, expert = graded_setup
    item.proof.text = LONG_PROOF
    item.proof.save(update_fields=["text"])
    page = open_on(touch, PHONE, live_server, login, campaign, expert)
    seen = page.evaluate(MEASURE)
    # the proof reads across the screen (its card's padding aside), nothing wider than it
    assert seen["proof"] >= 340 and seen["scroll"] == 390
    pane, toggle = page.locator("#scoring-pane"), page.locator("#scoring-toggle")
    expect(pane).to_be_hidden()  # closed: the proof is not covered at any scroll position
    page.evaluate("window.scrollTo(0, document.body.scrollHeight / 2)")
    expect(toggle).to_be_in_viewport()
    page.screenshot(path=str(screenshot_dir / "grading-phone-closed.png"))
    toggle.tap()
    expect(pane).to_be_visible()
    assert toggle.get_attribute("aria-expanded") == "true"
    expect(page.locator("#scoring-close")).to_be_focused()
    assert seen["small"] == [], seen["small"]
    page.locator('.cp-row[data-id="c1"] label.level:has(input[value="2"])').tap()
    expect(page.locator("#computed-score")).to_have_text("2")
    page.screenshot(path=str(screenshot_dir / "grading-phone-open.png"))
    page.locator("#scoring-close").tap()
    expect(pane).to_be_hidden()
    expect(page.locator("#scoring-toggle-score")).to_have_text("2")  # the score, on the button
    toggle.tap()
    page.locator("#scoring-submit").tap()
    page.wait_for_selector("text=No work left in Browser round")
    grade = Grade.objects.get(item=item, expert=expert)
    assert (grade.status, grade.score, grade.awards) == ("submitted", Decimal(2), {"c1": "2"})


def test_a_checklist_item_on_a_tablet_every_control_is_a_24px_target(
    touch,
    live_server,
    login,
    graded_setup,
    screenshot_dir,
):
    campaign, item, expert = graded_setup
    page = open_on(touch, TABLET, live_server, login, campaign, expert)
    page.locator("#pane-steps summary").tap()  # the step verdicts too
    seen = page.evaluate(MEASURE)
    assert seen["small"] == [] and seen["scroll"] == 1024, seen
    expect(page.locator("#scoring-toggle")).to_be_hidden()  # beside the proof: no panel
    page.locator('.cp-row[data-id="c2"] label.level:has(input[value="3"])').tap()
    expect(page.locator("#computed-score")).to_have_text("3")
    page.screenshot(path=str(screenshot_dir / "grading-tablet.png"))
    page.locator("#submit-button").tap()
    page.wait_for_selector("text=No work left in Browser round")
    assert Grade.objects.get(item=item, expert=expert).score == Decimal(3)


@pytest.mark.parametrize("size", [PHONE, TABLET], ids=["phone", "tablet"])
def test_a_band_item_is_graded_by_touch(
    touch,
    live_server,
    login,
    band_setup,
    screenshot_dir,
    size,
):
    campaign, item, expert = band_setup
    page = open_on(touch, size, live_server, login, campaign, expert)
    if size == PHONE:
        page.locator("#scoring-toggle").tap()
    seen = page.evaluate(MEASURE)
    assert seen["small"] == [] and seen["scroll"] == size[0], seen
    page.locator('.cp-row.band[data-id="partial"] label').first.tap()
    expect(page.locator("#computed-score")).to_have_text("1")
    page.screenshot(path=str(screenshot_dir / f"grading-bands-{size[0]}.png"))
    page.locator("#scoring-submit" if size == PHONE else "#submit-button").tap()
    page.wait_for_selector("text=No work left in Band round")
    grade = Grade.objects.get(item=item, expert=expert)
    assert (grade.score, grade.awards) == (Decimal(1), {"partial": "1"})
