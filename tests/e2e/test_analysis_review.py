"""Browser flow of an analysis review: an expert presses "next", splits a claimed defect out of
the verifier's analysis by selecting text, accepts another one suggested by the LLM pre-split,
links the proof passage one concerns, judges both with the keyboard, sees the rubric's rating
derived live, finds the draft after a reload, overrides with a reason and submits; the review
reaches adjudication as a final label."""

import re
import time
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from annotation.models import CampaignMember, DefectSuggestion, Grade, MetaReview
from tests.factories import UserFactory
from tests.metaverify.factories import analysis_item, review_campaign

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GAP = "Step 2 divides by x without checking that x is nonzero."
BOUND = "Step 3 claims the bound for every n but only proves it for even n."
COMMENT = "The parity claim is not in the proof."

SELECT = """([selector, quote]) => {
  const root = document.querySelector(selector);
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const at = node.data.indexOf(quote);
    if (at >= 0) {
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + quote.length);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      return true;
    }
  }
  return false;
}"""


def test_expert_reviews_an_analysis_end_to_end(
    page, live_server, login, screenshot_dir, assert_accessible
):
    campaign = review_campaign(slug="meta-e2e", name="Meta-verification pilot")
    item = analysis_item(campaign)
    start = item.analysis.text.index(BOUND)
    DefectSuggestion.objects.create(
        analysis=item.analysis, start=start, end=start + len(BOUND), quote=BOUND, source="llm"
    )
    expert = UserFactory(username="meta-expert", roles=["expert"])
    CampaignMember.objects.create(campaign=campaign, user=expert, role="expert")
    login(page, expert)

    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#analysis-text")
    assert "Judge only the defects the analysis claims" in page.inner_text("#pane-scope")
    assert page.locator("#analysis-text .katex, #proof-text .katex").count() >= 1  # KaTeX ran

    assert page.evaluate(SELECT, ["#analysis-text", GAP])
    page.keyboard.press("d")
    page.wait_for_selector("#defect-list .defect")
    assert page.locator("#analysis-text mark.claim-suggested").count() == 1
    page.click("#suggestion-list >> text=accept as a defect")  # the LLM pre-split's suggestion
    expect(page.locator("#defect-list .defect")).to_have_count(2)
    assert page.is_hidden("#suggestion-box")
    assert page.locator("#analysis-text mark.claim").count() == 2

    page.keyboard.press("j")  # focus the first defect (the gap)
    page.keyboard.press("1")  # it exists
    page.keyboard.press("3")  # and the analysis describes it accurately
    assert page.evaluate(SELECT, ["#proof-text", "dividing by"])
    page.keyboard.press("l")  # the proof passage it concerns
    page.wait_for_selector("#proof-text mark.passage")
    page.keyboard.press("j")  # the second defect
    page.keyboard.press("2")  # does not exist
    expect(page.locator("#derived-rating")).to_have_text("0.5")
    assert "1 of the 2 claimed defects are unreasonable" in page.inner_text("#derived-reason")
    assert page.is_visible("#aspects-moot")
    page.fill("#comment", COMMENT)
    expect(page.locator("#save-status")).to_have_text(re.compile("^Saved"))
    page.evaluate("document.querySelector('.review-panel').scrollTop = 0")
    page.screenshot(path=str(screenshot_dir / "analysis-review.png"))
    assert_accessible(page)

    # the comment's own save on the server first: "Saved" above may be an earlier save's, and a
    # save still on its way when the page goes is sent again by the next page, which then says
    # "Saved" instead of "Draft restored" (a loaded machine, 2026-12-06)
    deadline = time.monotonic() + 15
    while not Grade.objects.filter(item=item, comment=COMMENT).exists():
        assert time.monotonic() < deadline, "the comment's save never reached the server"
        time.sleep(0.05)
    page.reload()  # the draft lives on the server
    expect(page.locator("#defect-list .defect")).to_have_count(2)
    assert page.inner_text("#derived-rating") == "0.5"
    assert page.inner_text("#save-status") == "Draft restored"
    assert page.input_value("#comment") == COMMENT

    page.select_option("#override", "0")
    assert page.is_visible("#override-reason-box")
    page.click("body")
    page.keyboard.press("Enter")
    expect(page.locator("#submit-refused")).to_contain_text("override: give the reason")
    page.fill("#override-reason", "Both defects are about the same wrong step.")
    page.click("#submit-button")
    page.wait_for_url(f"**/annotation/{campaign.slug}/next/?after={item.pk}")

    review = MetaReview.objects.get()
    assert (review.derived_rating, review.override, review.value) == (
        Decimal("0.5"),
        Decimal("0"),
        Decimal("0"),
    )
    first, second = review.defects.all()
    assert (first.quote, first.exists, first.accurate) == (GAP, True, True)
    assert (
        first.proof_quote == "dividing by"
        and item.proof.text[first.proof_start : first.proof_end] == "dividing by"
    )
    assert (second.quote, second.exists, second.from_suggestion) == (BOUND, False, True)
    item.refresh_from_db()
    assert item.final_label.value == Decimal("0") and item.final_label.source == "single"


def test_review_shortcuts_live_after_a_click_and_enter_on_skip_skips(page, live_server, login):
    """A clicked radio leaves the keys to the page; Enter on a refused review says why beside
    Submit; Enter on the focused Skip button skips even when the review could be submitted."""
    campaign = review_campaign(slug="meta-keys", name="Meta keys")
    item = analysis_item(campaign)
    expert = UserFactory(username="meta-keys", roles=["expert"])
    CampaignMember.objects.create(campaign=campaign, user=expert, role="expert")
    login(page, expert)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#analysis-text")
    assert page.inner_text("#save-status") == ""  # nothing restored

    page.click("input[name=expression_error][value=false]")
    problem_open = page.evaluate("document.getElementById('pane-problem').open")
    page.keyboard.press("p")  # a shortcut, right after clicking a radio
    assert page.evaluate("document.getElementById('pane-problem').open") is not problem_open
    page.keyboard.press("Enter")
    refused = page.locator("#submit-refused")
    expect(page.locator("#submit-refused")).not_to_have_text("")
    assert "score: say whether the analysis's score fits" in refused.inner_text()

    page.click("input[name=score_fits][value=true]")
    expect(page.locator("#derived-rating")).to_have_text("1")
    assert refused.inner_text() == ""
    expect(page.locator("#save-status")).to_have_text(re.compile("^Saved"))
    page.focus("#skip-button")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=No work left in Meta keys")
    grade = item.grades.get()
    assert grade.status == "draft" and item.assignments.get().status == "released"


def test_a_review_whose_session_ends_survives_a_reload(
    context, live_server, login, screenshot_dir, assert_accessible
):
    """The session cookie goes; the reviewer splits out a defect, answers, submits: the page
    says the session ended. A reload leads to the log-in form; once logged in again, the review
    page shows the choices this browser kept, sends them, and Enter submits the choice."""
    campaign = review_campaign(slug="meta-night", name="Meta night")
    item = analysis_item(campaign)
    expert = UserFactory(username="meta-night", roles=["expert"])
    CampaignMember.objects.create(campaign=campaign, user=expert, role="expert")
    page = context.new_page()
    login(page, expert)
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#analysis-text")
    review_url = page.url

    context.clear_cookies(name="sessionid")
    assert page.evaluate(SELECT, ["#analysis-text", GAP])
    page.keyboard.press("d")
    page.keyboard.press("1")  # the defect exists
    page.keyboard.press("3")  # and is described accurately
    page.click("input[name=expression_error][value=false]")
    page.click("input[name=score_fits][value=true]")
    page.fill("#comment", "Kept through the night.")
    expect(page.locator("#derived-rating")).to_have_text("1")
    page.click("body")
    page.keyboard.press("Enter")
    page.wait_for_selector("#item-notice:not([hidden])")
    assert "Your session ended" in page.inner_text("#item-notice")
    assert not MetaReview.objects.exists()
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(screenshot_dir / "analysis-review-session-ended.png"))
    assert_accessible(page)

    page.reload()  # no session: the log-in form, which leads back to the review
    page.wait_for_selector("#id_username")
    page.fill("#id_username", expert.username)
    page.fill("#id_password", "pass-word-123")
    page.click("button[type=submit]")
    page.wait_for_url(review_url)
    expect(page.locator("#defect-list .defect")).to_have_count(1)
    assert page.is_checked("input[name=expression_error][value=false]")
    assert page.is_checked("input[name=score_fits][value=true]")
    assert page.input_value("#comment") == "Kept through the night."
    assert page.inner_text("#derived-rating") == "1"
    expect(page.locator("#save-status")).to_have_text(re.compile("^Saved"))
    draft = MetaReview.objects.get()
    assert (draft.grade.status, draft.expression_error, draft.score_fits) == ("draft", False, True)
    assert (
        page.evaluate(
            "() => Object.keys(localStorage).filter((k) => k !== 'proofmark:browser').length"
        )
        == 0
    )  # the server has it
    page.evaluate("document.querySelector('.review-panel').scrollTop = 0")
    page.screenshot(path=str(screenshot_dir / "analysis-review-restored.png"))
    assert_accessible(page)

    page.dblclick("#submit-button")  # a double click submits once
    page.wait_for_url(f"**/annotation/{campaign.slug}/next/?after={item.pk}")
    review = MetaReview.objects.get()
    (defect,) = review.defects.all()
    assert (review.grade.status, review.grade.comment, review.value) == (
        "submitted",
        "Kept through the night.",
        Decimal("1"),
    )
    assert (defect.quote, defect.exists, defect.accurate) == (GAP, True, True)
    assert not review.grade.revisions.exists()

    page.go_back()  # the submitted review as the server has it, nothing left to restore
    page.wait_for_url(review_url)
    page.wait_for_selector("#defect-list .defect")
    assert not page.inner_text("#save-status").startswith("Restored")
    assert (
        page.evaluate(
            "() => Object.keys(localStorage).filter((k) => k !== 'proofmark:browser').length"
        )
        == 0
    )
