"""Browser flows of the grading page: grade with the keyboard only, select text and tag an
error, close the tab mid-grade and find the draft (spans included) in a fresh browser."""

import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from annotation import services
from annotation.models import ErrorSpan, Grade
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.conftest import wait_for
from tests.problems.page_factories import ReferenceSolutionFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PROOF = (
    "We first show that $f(x) \\ge 0$ for every real $x$.\n\n"
    "Clearly the minimum is attained at $x = 1$, so $f(1) = 0$ and the claim follows.\n\n"
    "Finally $$\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$$ which completes the proof."
)


@pytest.fixture
def graded_setup(transactional_db):
    campaign = CampaignFactory(name="Browser round", guidelines="Grade the **best** attempt.")
    item = ItemFactory(campaign=campaign, proof__text=PROOF)
    ReferenceSolutionFactory(problem=item.proof.problem)
    expert = expert_in(campaign, "grader-e2e")
    return campaign, item, expert


def open_item(page, live_server, campaign):
    page.goto(f"{live_server.url}/annotation/{campaign.slug}/")
    page.click("button:has-text('Grade next')")
    page.wait_for_selector("#proof-text .katex")
    expect(page.locator("#computed-score")).not_to_have_text("\u2013")


def select_text(page, needle: str):
    """Selects the first occurrence of `needle` inside one text node of the rendered proof."""
    page.evaluate(
        """(needle) => {
          const root = document.getElementById('proof-text');
          const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
          let node;
          while ((node = walker.nextNode())) {
            const at = node.data.indexOf(needle);
            if (at >= 0) {
              const range = document.createRange();
              range.setStart(node, at); range.setEnd(node, at + needle.length);
              const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
              return;
            }
          }
          throw new Error('not found: ' + needle);
        }""",
        needle,
    )


def select_across(page, needle: str):
    """Selects the first occurrence of `needle` in the rendered proof's text, whatever text
    nodes (highlights) it runs across."""
    page.evaluate(
        """(needle) => {
          const root = document.getElementById('proof-text');
          const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
          const nodes = [];
          let node, text = '';
          while ((node = walker.nextNode())) { nodes.push([node, text.length]); text += node.data; }
          const at = text.indexOf(needle);
          if (at < 0) throw new Error('not found: ' + needle);
          const place = (offset) => {
            for (let i = nodes.length - 1; i >= 0; i--) {
              if (nodes[i][1] <= offset) return [nodes[i][0], offset - nodes[i][1]];
            }
          };
          const range = document.createRange();
          range.setStart(...place(at));
          range.setEnd(...place(at + needle.length));
          const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
        }""",
        needle,
    )


def test_grade_a_proof_with_the_keyboard_only(
    page, live_server, login, graded_setup, screenshot_dir, assert_accessible
):
    campaign, item, expert = graded_setup
    login(page, expert)
    open_item(page, live_server, campaign)
    assert page.locator(".katex-error, .math-error").count() == 0
    page.screenshot(path=str(screenshot_dir / "grading-page.png"), full_page=True)
    assert_accessible(page)
    for key in ["j", "2", "j", "3", "j", "1"]:
        page.keyboard.press(key)
    expect(page.locator("#computed-score")).to_have_text("6")
    assert page.locator("input[name=score][value='6']").is_checked()
    page.keyboard.press("Escape")
    page.keyboard.press("5")
    assert page.locator("input[name=score][value='5']").is_checked()
    # a score other than the computed one is an override, said before submitting
    assert page.locator("#score-note-box").is_visible()
    assert page.inner_text("#override-text") == "Override: computed 6, you chose 5."
    page.keyboard.press("m")
    assert page.locator("#pane-scheme").get_attribute("open") is not None
    page.keyboard.press("c")
    page.keyboard.type("Equality case argued loosely.")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")  # without a note the server refuses the override, naming it
    expect(page.locator("#submit-refused")).to_have_text(re.compile("^score_note:"))
    page.fill("#score-note", "The equality case is only sketched.")
    page.keyboard.press("Escape")
    page.screenshot(path=str(screenshot_dir / "grading-keyboard.png"), full_page=True)
    assert_accessible(page)
    page.keyboard.press("Enter")
    page.wait_for_selector("text=No work left in Browser round")
    page.screenshot(path=str(screenshot_dir / "grading-no-work.png"), full_page=True)
    assert_accessible(page)
    grade = Grade.objects.get(item=item, expert=expert)
    assert grade.status == "submitted"
    assert grade.score == Decimal(5) and grade.computed_score == Decimal(6)
    assert grade.awards == {"c1": "2", "c2": "3", "c3": "1"}
    assert grade.comment == "Equality case argued loosely."
    assert grade.score_note == "The equality case is only sketched."


def test_select_text_and_tag_an_error(
    page, live_server, login, graded_setup, screenshot_dir, assert_accessible
):
    campaign, item, expert = graded_setup
    login(page, expert)
    open_item(page, live_server, campaign)
    select_text(page, "Clearly the minimum")
    page.keyboard.press("e")
    page.wait_for_selector("#span-popup:not([hidden])")
    page.select_option("#span-category", "skipped_steps")
    page.fill("#span-note", "No reason given for the minimum.")
    page.click("#span-save")
    page.wait_for_selector("mark.err")
    assert page.locator("#span-list li").count() == 1
    wait_for(lambda: ErrorSpan.objects.filter(grade__item=item).exists())
    span = ErrorSpan.objects.get(grade__item=item)
    assert span.quote == "Clearly the minimum"
    assert PROOF[span.start : span.end] == span.quote
    assert span.category == "skipped_steps" and span.note == "No reason given for the minimum."
    # a selection running into typeset math snaps to the whole formula, delimiters included
    page.evaluate(
        """() => {
          const root = document.getElementById('proof-text');
          const p = root.querySelectorAll('p')[1];
          const walker = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
          let node;
          while ((node = walker.nextNode()) && node.data.indexOf('attained at') < 0) {}
          const math = p.querySelector('.math');
          const range = document.createRange();
          range.setStart(node, node.data.indexOf('attained at'));
          range.setEndAfter(math.querySelector('.katex-html'));
          const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
        }"""
    )
    page.keyboard.press("e")
    page.wait_for_selector("#span-popup:not([hidden])")
    page.select_option("#span-category", "missing_cases")
    page.click("#span-save")
    expect(page.locator("#span-list li")).to_have_count(2)
    wait_for(lambda: ErrorSpan.objects.filter(grade__item=item).count() == 2)
    quotes = sorted(ErrorSpan.objects.filter(grade__item=item).values_list("quote", flat=True))
    assert "attained at $x = 1$" in quotes
    assert page.locator(".math.err-math").count() == 1
    page.screenshot(path=str(screenshot_dir / "grading-error-spans.png"), full_page=True)
    assert_accessible(page)


def save_revision(page, item):
    """Leaves the checklist and submits: the expert's grade becomes 4 with one revision."""
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^Revision\ saved"))
    grade = Grade.objects.get(item=item)
    assert grade.score == Decimal(4) and grade.revisions.count() == 1


def test_overlapping_errors_then_a_revision(
    page, live_server, login, graded_setup, assert_accessible
):
    campaign, item, expert = graded_setup
    item.required_judgements = 2  # not final after this expert's grade: it stays revisable
    item.save(update_fields=["required_judgements"])
    login(page, expert)
    open_item(page, live_server, campaign)
    for needle, category in [("Clearly the minimum", "skipped_steps"), ("the minimum is", "other")]:
        select_across(page, needle)
        page.keyboard.press("e")
        page.select_option("#span-category", category)
        page.click("#span-save")
    expect(page.locator("#span-list li")).to_have_count(2)
    assert page.locator("mark.err-multi").inner_text() == "the minimum"
    assert page.locator("mark.err-multi").get_attribute("title").startswith("#1 ")
    for key in ["j", "2", "j", "3", "j", "1"]:
        page.keyboard.press(key)
    expect(page.locator("#computed-score")).to_have_text("6")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=No work left in Browser round")
    assert Grade.objects.get(item=item).score == Decimal(6)

    page.goto(f"{live_server.url}/annotation/items/{item.pk}/")
    page.wait_for_selector("#proof-text mark.err-multi")
    # a submitted grade opens read-only, with a link to revise it
    assert page.locator("#submit-button").count() == 0
    assert page.locator("input[name=score][value='6']").is_disabled()
    assert_accessible(page)
    with page.expect_navigation():  # until load: the page's keys are bound
        page.click("#revise-link")
    page.wait_for_selector("#proof-text mark.err-multi")
    assert page.inner_text("#submit-button").startswith("Save revision")
    page.keyboard.press("j")
    page.keyboard.press("0")  # the computed score is previewed, nothing saved yet
    expect(page.locator("#computed-score")).to_have_text("4")
    expect(page.locator("#save-status")).to_have_text(re.compile(r"^Not\ yet\ saved"))
    assert Grade.objects.get(item=item).score == Decimal(6)
    save_revision(page, item)


def test_closed_tab_loses_nothing(
    browser, live_server, login, graded_setup, screenshot_dir, assert_accessible
):
    campaign, item, expert = graded_setup
    first = browser.new_context(viewport={"width": 1366, "height": 900})
    page = first.new_page()
    login(page, expert)
    open_item(page, live_server, campaign)
    page.click("input[name='award-c1'][value='2']")
    select_text(page, "the claim follows")
    page.keyboard.press("e")
    page.select_option("#span-category", "wrong_logical_conclusion")
    page.fill("#span-note", "Does not follow.")
    page.click("#span-save")
    page.fill("#comment", "Half done")
    page.click("#pane-steps summary")
    page.click("input[name='step-2'][value='wrong']")
    wait_for(
        lambda: Grade.objects.filter(
            item=item,
            comment="Half done",
            step_verdicts={"2": "wrong"},
            spans__isnull=False,
            score__isnull=True,  # the final score follows the checklist: not chosen, not saved
            computed_score=2,
        ).exists()
    )
    first.close()

    second = browser.new_context(viewport={"width": 1366, "height": 900})
    try:
        page = second.new_page()
        login(page, expert)
        open_item(page, live_server, campaign)
        assert page.locator("input[name='award-c1'][value='2']").is_checked()
        # the final score followed the checklist and still does
        assert page.locator("input[name=score][value='2']").is_checked()
        assert page.locator("#score-note-box").is_hidden()
        assert page.locator("#comment").input_value() == "Half done"
        assert page.locator("#span-list li").count() == 1
        assert page.locator("mark.err").first.inner_text() == "the claim follows"
        page.keyboard.press("t")
        assert page.locator("input[name='step-2'][value='wrong']").is_checked()
        assert page.locator("#first-wrong").inner_text() == "step 2"
        assert page.locator("#save-status").inner_text() == "Draft restored"
        page.screenshot(path=str(screenshot_dir / "grading-restored.png"), full_page=True)
        assert_accessible(page)
    finally:
        second.close()
    assert Grade.objects.get(item=item).status == "draft"


def test_admin_dashboard_shows_progress_and_plot(
    page, live_server, login, admin_user, screenshot_dir, assert_accessible
):
    campaign = CampaignFactory(name="Dashboard round")
    for generator, score in [("model-a", "6"), ("model-a", "2"), ("model-b", "4")]:
        item = ItemFactory(campaign=campaign, proof__generator=generator)
        expert = expert_in(campaign)
        services.assignment_next(campaign=campaign, expert=expert)
        services.grade_submit(
            item=item, expert=expert, data=services.GradeInput.from_data({"score": score})
        )
    ItemFactory(campaign=campaign)
    login(page, admin_user)
    page.click("nav.mainnav >> text=Campaigns")
    page.click("text=Dashboard round")
    page.wait_for_selector("svg.score-plot")
    assert page.locator("#items-done").inner_text() == "3"
    assert page.locator("#items-waiting").inner_text() == "1"
    assert page.locator("svg.score-plot circle").count() == 3
    page.screenshot(path=str(screenshot_dir / "campaign-dashboard.png"), full_page=True)
    assert_accessible(page)


def test_back_to_a_graded_item_from_the_campaign_page_and_revise(
    page, live_server, login, graded_setup, screenshot_dir, assert_accessible
):
    """A single-judgement item gets its label on submit and stays revisable: the expert finds
    it in "Your judgements" on the campaign page and saves a revision."""
    campaign, item, expert = graded_setup
    login(page, expert)
    open_item(page, live_server, campaign)
    for key in ["j", "2", "j", "3", "j", "1"]:
        page.keyboard.press(key)
    expect(page.locator("#computed-score")).to_have_text("6")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=No work left in Browser round")
    page.click("text=Back to the campaign")
    page.wait_for_selector("#own-grades-table")
    assert "1 judgement of yours" in page.inner_text("#own-grades")
    page.screenshot(path=str(screenshot_dir / "grading-own-judgements.png"))
    assert_accessible(page)
    with page.expect_navigation():  # until load: the page's keys are bound
        page.click("#own-grades-table >> text=revise")
    page.wait_for_selector("#proof-text .katex")
    assert page.inner_text("#submit-button").startswith("Save revision")
    page.keyboard.press("j")
    page.keyboard.press("0")
    expect(page.locator("#computed-score")).to_have_text("4")
    save_revision(page, item)
    assert item.final_label.value == Decimal(4)  # the single label followed the revision


IN_VIEW = """(id) => {
  const r = document.getElementById(id).getBoundingClientRect();
  return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;
}"""
LONG_PROOF = PROOF + "".join(
    f"\n\nLemma {k}. The case $n = {k}$ follows from the case $n = {k - 1}$ as before."
    for k in range(2, 40)
)


def test_a_fresh_checklist_item_is_not_graded_and_enter_submits_nothing(
    page, live_server, login, graded_setup, screenshot_dir
):
    """Opening saves nothing; Enter (even twice, even scrolled down) is refused with the reason
    beside Submit, in view and announced; after one award the score follows the checklist,
    double Enter submits once, and the back button shows the submitted grade."""
    campaign, item, expert = graded_setup
    item.proof.text = LONG_PROOF
    item.proof.save(update_fields=["text"])
    login(page, expert)
    open_item(page, live_server, campaign)
    page.wait_for_load_state("networkidle")
    assert not Grade.objects.filter(item=item).exists()
    assert page.inner_text("#computed-score") == "0"
    assert page.locator("input[name=score]:checked").count() == 0
    assert page.is_visible("#not-graded") and page.inner_text("#save-status") == ""
    page.screenshot(path=str(screenshot_dir / "grading-fresh-checklist.png"))

    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    scrolled = page.evaluate("window.scrollY")
    assert scrolled > 0
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    refused = page.locator("#submit-refused")
    assert refused.inner_text().startswith("Not graded yet: give a checkpoint its points")
    assert refused.get_attribute("aria-live") == "assertive"
    # in view where the expert is reading: the page did not jump back to its top
    assert page.evaluate(IN_VIEW, "submit-refused") and page.evaluate("window.scrollY") >= scrolled
    page.screenshot(path=str(screenshot_dir / "grading-refused.png"))
    page.click("#submit-button")
    assert page.inner_text("#save-status") == "Not submitted"
    page.wait_for_load_state("networkidle")
    assert not Grade.objects.filter(item=item).exists()

    page.keyboard.press("j")
    page.keyboard.press("2")  # c1 gets 2 points: the final score follows
    expect(page.locator("#computed-score")).to_have_text("2")
    assert page.locator("input[name=score][value='2']").is_checked()
    assert page.is_hidden("#not-graded") and refused.inner_text() == ""
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=No work left in Browser round")
    grade = Grade.objects.get(item=item, expert=expert)
    assert (grade.status, grade.score, grade.awards) == ("submitted", Decimal(2), {"c1": "2"})
    item.refresh_from_db()
    assert item.submitted_count == 1

    page.go_back()
    page.wait_for_selector("#proof-text .katex")
    # the submitted grade, read-only until the expert asks to revise it
    assert page.locator("#submit-button").count() == 0 and page.is_visible("#revise-link")
    assert "You submitted this grade" in page.inner_text(".grading")


def test_enter_on_a_focused_control_does_what_the_control_says(
    page, live_server, login, graded_setup
):
    """With a score chosen (so a submission would be accepted), Enter in the comment box types
    a new line, Enter on the breadcrumb follows it, on Next goes next, on Skip skips:
    nothing is submitted."""
    campaign, item, expert = graded_setup
    login(page, expert)
    open_item(page, live_server, campaign)
    page.keyboard.press("5")
    expect(page.locator("#save-status")).to_have_text(re.compile("^Saved"))
    page.click("#comment")
    page.keyboard.type("first")
    page.keyboard.press("Enter")
    page.keyboard.type("second")
    assert page.input_value("#comment") == "first\nsecond"
    page.keyboard.press("Escape")
    assert page.locator("#not-graded").is_hidden()

    page.focus(".crumbs a")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("#own-grades")
    assert Grade.objects.get(item=item).status == "draft"

    page.goto(f"{live_server.url}/annotation/items/{item.pk}/")
    page.wait_for_selector("#proof-text .katex")
    # the draft as the server holds it, or (the comment's save left with the page, its answer
    # unread) as this browser kept it, sent again: a repeat, never a conflict
    expect(page.locator("#save-status")).to_have_text(re.compile("^(Draft restored|Saved)"))
    assert page.locator("input[name=score][value='5']").is_checked()
    assert page.input_value("#comment") == "first\nsecond" and page.is_hidden("#item-notice")
    page.focus("#next-link")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    # Next moves on (never to this item): none left, the held item is offered back
    page.wait_for_selector("text=No work left in Browser round")
    assert Grade.objects.get(item=item).status == "draft"
    page.click("#held-item")
    page.wait_for_selector("#proof-text .katex")

    page.focus("#skip-button")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=No work left in Browser round")
    grade = Grade.objects.get(item=item)
    assert grade.status == "draft" and grade.score == Decimal(5)
    assert item.assignments.get().status == "released"


def test_item_k_of_n_next_moves_on_and_previous_comes_back(
    page, live_server, login, screenshot_dir, assert_accessible
):
    campaign = CampaignFactory(name="Three proofs")
    items = [ItemFactory(campaign=campaign, proof__text=PROOF) for _ in range(3)]
    expert = expert_in(campaign, "flow-e2e")
    login(page, expert)
    open_item(page, live_server, campaign)
    assert page.inner_text("#position") == "item 1 of 3 for you, 2 remaining"
    assert page.url.endswith(f"/items/{items[0].pk}/")
    page.click("#next-link")  # not submitted: Next moves on, the first stays the expert's
    page.wait_for_url(f"**/items/{items[1].pk}/")
    page.wait_for_selector("#proof-text .katex")
    for key in ["j", "2", "j", "3", "j", "1"]:
        page.keyboard.press(key)
    expect(page.locator("#computed-score")).to_have_text("6")
    page.keyboard.press("Enter")
    # on to new work: the item moved on from comes back once the rest is done
    page.wait_for_url(f"**/items/{items[2].pk}/")
    page.wait_for_selector("#proof-text .katex")
    assert page.inner_text("#position") == "item 2 of 3 for you, 1 remaining"
    page.screenshot(path=str(screenshot_dir / "grading-position.png"))
    assert_accessible(page)
    page.click("#previous-link")
    page.wait_for_url(f"**/items/{items[1].pk}/")
    page.wait_for_selector("#revise-link")
    assert "item 1 of 3" in page.inner_text("#position")
    page.set_viewport_size({"width": 800, "height": 900})
    page.screenshot(path=str(screenshot_dir / "grading-previous-800.png"))
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 800, "the page is wider than an 800 px window"
    assert page.locator(".topbar").bounding_box()["height"] < 120  # two lines at most
    assert_accessible(page)


def test_next_pressed_five_times_shows_five_different_items(page, live_server, login):
    """`n` walks the campaign: five presses, five items never shown before (it alternated
    between two); once nothing new is left, the item moved on from longest ago comes back."""
    campaign = CampaignFactory(name="Long walk")
    items = [ItemFactory(campaign=campaign, proof__text=PROOF) for _ in range(6)]
    login(page, expert_in(campaign, "walker-e2e"))
    open_item(page, live_server, campaign)
    shown = [page.url]
    for _ in range(5):
        page.keyboard.press("n")
        page.wait_for_url(lambda url, before=shown[-1]: url != before)
        page.wait_for_selector("#proof-text .katex")
        shown.append(page.url)
    assert shown == [f"{live_server.url}/annotation/items/{item.pk}/" for item in items]
    page.keyboard.press("n")  # nothing new is left
    page.wait_for_url(f"**/items/{items[0].pk}/")
