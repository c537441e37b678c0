"""The case page at a glance on a 1366x900 screen: the two judgements, the checkpoints where
they differ and the decision controls sit in the first viewport however long the proof; the
keys (b accepts Expert B, Enter records it, n opens the next case) and the slips (a double
click, Back after deciding)."""

from decimal import Decimal

import pytest

from adjudication.models import AdjudicationCase, CaseEvent, FinalLabel
from tests.adjudication.factories import ErrorSpanFactory, ItemFactory, judge
from tests.factories import UserFactory
from tests.problems.page_factories import ProofFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PARAGRAPH = (
    "Let $n$ be odd. Then $n^2 - 1 = (n-1)(n+1)$ is a product of two consecutive even numbers, "
    "so one of them is divisible by 4 and $8 \\mid n^2 - 1$.\n\n"
)
LONG_PROOF = PARAGRAPH * 40 + "Hence the claim holds for every odd $n$."


def disputed_case(scores=(2, 6)) -> AdjudicationCase:
    item = ItemFactory(proof=ProofFactory(text=LONG_PROOF))
    a, b = judge(item, *scores)
    a.awards, b.awards = {"c1": "1", "c2": "0", "c3": "1"}, {"c1": "1", "c2": "3", "c3": "2"}
    a.comment = "The divisibility by 8 is asserted, not argued. " * 6
    a.save(), b.save()
    start = LONG_PROOF.index("so one of them")
    ErrorSpanFactory(grade=a, start=start, end=start + 40, category="skipped_steps", note="")
    start = LONG_PROOF.index("Hence the claim")
    ErrorSpanFactory(grade=b, start=start, end=start + 15, category="proof_by_example", note="")
    return AdjudicationCase.objects.get(item=item)


def in_first_viewport(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 900


def test_the_decision_is_in_the_first_viewport_and_keys_decide(
    page, live_server, login, screenshot_dir, assert_accessible
):
    first, second = disputed_case(), disputed_case(scores=(1, 5))
    login(page, UserFactory(username="adj-glance", roles=["adjudicator"]))
    page.goto(f"{live_server.url}/adjudication/cases/{first.pk}/")
    page.wait_for_selector("#proof-typeset .katex")
    page.screenshot(path=str(screenshot_dir / "adjudication-glance.png"))
    for selector in ("#compare", "#awards", "#accept-form", "#accept-button", "#new-score-form"):
        assert in_first_viewport(page, selector), selector
    assert "b accept Expert B" in page.inner_text("#case-keys")
    assert page.evaluate("document.documentElement.scrollHeight") <= 1000  # was 13,372 px
    # the long proof scrolls in its own column, spans of both experts on the one copy
    assert page.locator("#proof-typeset mark.layer-a").count() >= 1
    assert page.locator("#proof-typeset mark.layer-b").count() >= 1
    page.screenshot(path=str(screenshot_dir / "adjudication-glance.png"))
    assert_accessible(page)

    page.keyboard.press("s")
    assert page.evaluate("document.activeElement.id") == "new-score"
    page.keyboard.press("Escape")  # keys.js: Escape leaves a field
    page.keyboard.press("b")
    assert page.locator('#accept-form input[data-accept="b"]').is_checked()
    assert page.evaluate("document.activeElement.id") == "accept-button"
    page.keyboard.press("Enter")
    page.wait_for_selector("#resolution")
    label = FinalLabel.objects.get(item=first.item)
    assert (label.value, label.source) == (Decimal("6"), "adjudication")
    assert in_first_viewport(page, "#next-case")
    page.screenshot(path=str(screenshot_dir / "adjudication-glance-resolved.png"))

    page.go_back()  # Back shows the case decided, not the form that decided it
    page.wait_for_selector("#case-status")
    assert page.inner_text("#case-status") == "Resolved"
    assert page.locator("#decide").count() == 0
    page.goto(f"{live_server.url}/adjudication/cases/{first.pk}/")
    page.keyboard.press("n")
    page.wait_for_url(f"**/adjudication/cases/{second.pk}/")

    # a double click on Accept records one decision and shows no refusal
    page.keyboard.press("a")
    page.dblclick("#accept-button")
    page.wait_for_selector("#resolution")
    assert not page.locator("ul.messages li.error").count()
    assert FinalLabel.objects.get(item=second.item).value == Decimal("1")
    assert CaseEvent.objects.filter(case=second, kind="resolved").count() == 1


def test_a_key_in_a_field_is_typed_not_a_decision(page, live_server, login):
    case = disputed_case()
    login(page, UserFactory(username="adj-typing", roles=["adjudicator"]))
    page.goto(f"{live_server.url}/adjudication/cases/{case.pk}/")
    page.fill("#accept-rationale", "")
    page.press("#accept-rationale", "b")
    page.press("#accept-rationale", "Enter")  # a new line in the rationale, not a submit
    assert page.input_value("#accept-rationale") == "b\n"
    assert not page.locator('#accept-form input[data-accept="b"]').is_checked()
    assert not FinalLabel.objects.filter(item=case.item).exists()


def test_the_case_page_runs_under_the_policy(strict_page, live_server, login):
    """The spans laid over the typeset proof and the keys are the page's own script: nothing
    is blocked by the Content-Security-Policy."""
    case = disputed_case()
    login(strict_page, UserFactory(username="adj-csp", roles=["adjudicator"]))
    strict_page.goto(f"{live_server.url}/adjudication/cases/{case.pk}/")
    strict_page.wait_for_selector("#proof-typeset mark.layer-b")
    strict_page.keyboard.press("a")
    assert strict_page.locator('#accept-form input[data-accept="a"]').is_checked()
    assert strict_page.csp_errors == []
