"""Browser flow: an adjudicator opens the queue, reads a disputed case (two experts side by
side, spans in two colours, differing checkpoints highlighted), marks an error span of their
own and records a new score with a rationale."""

from decimal import Decimal

import pytest

from adjudication.models import AdjudicationCase, FinalLabel
from tests.adjudication.factories import ErrorSpanFactory, ItemFactory, judge
from tests.factories import UserFactory
from tests.problems.page_factories import ProofFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PROOF = (
    "Let $n$ be odd. Then $n^2 - 1 = (n-1)(n+1)$ is a product of two consecutive even numbers, "
    "so one of them is divisible by 4 and $8 \\mid n^2 - 1$.\n\n"
    "Hence for every odd $n$ the claim holds, and checking $n = 3$ confirms it."
)


@pytest.fixture
def disputed_case(transactional_db):
    item = ItemFactory(proof=ProofFactory(text=PROOF))
    a, b = judge(item, 2, 6)
    a.awards, a.comment = {"c1": "1", "c2": "0"}, "The divisibility by 8 is not argued."
    b.awards, b.comment = {"c1": "1", "c2": "3"}, "Complete apart from style."
    a.save(), b.save()
    start = PROOF.index("so one of them")
    ErrorSpanFactory(grade=a, start=start, end=start + 40, category="skipped_steps", note="why 4?")
    start = PROOF.index("checking $n = 3$")
    ErrorSpanFactory(grade=b, start=start, end=start + 16, category="proof_by_example", note="")
    return AdjudicationCase.objects.get(item=item)


def test_adjudicator_resolves_a_case_with_a_new_score(
    page, live_server, login, disputed_case, screenshot_dir
):
    login(page, UserFactory(username="adj-e2e", roles=["adjudicator"]))
    page.click("nav.mainnav >> text=Adjudication")
    page.click(f"#case-queue >> text=#{disputed_case.pk}")
    page.wait_for_selector("#proof-source")
    assert page.locator(".judgement").count() == 2
    assert page.locator("#awards tr.differs").count() == 1
    assert page.locator("#proof-source mark.layer-a").count() >= 1
    assert page.locator("#proof-source mark.layer-b").count() >= 1
    page.screenshot(path=str(screenshot_dir / "adjudication-case.png"), full_page=True)

    page.click("#span-editor > summary")
    target = "Hence for every odd"
    page.evaluate(
        """(target) => {
            const box = document.getElementById("proof-source");
            const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
            let node;
            while ((node = walker.nextNode())) {
                const at = node.textContent.indexOf(target);
                if (at >= 0) {
                    const range = document.createRange();
                    range.setStart(node, at);
                    range.setEnd(node, at + target.length);
                    const sel = window.getSelection();
                    sel.removeAllRanges();
                    sel.addRange(range);
                    return;
                }
            }
        }""",
        target,
    )
    page.wait_for_timeout(100)
    page.select_option("#span-category", "wrong_logical_conclusion")
    page.fill("#span-note", "does not follow for all n")
    page.click("#add-span")
    assert "wrong_logical_conclusion" in page.inner_text("#new-spans")
    page.select_option("#new-score", label="4")
    page.fill("#new-rationale", "The factor 8 needs both factors even; the last line adds nothing.")
    page.click("#new-score-form button[type=submit]")
    page.wait_for_selector("#resolution")
    assert "Resolved" in page.inner_text("#resolution")
    assert page.inner_text("#case-status") == "Resolved"
    page.screenshot(path=str(screenshot_dir / "adjudication-resolved.png"), full_page=True)

    label = FinalLabel.objects.get(item=disputed_case.item)
    assert (label.value, label.source) == (Decimal("4"), "adjudication")
    span = disputed_case.spans.get()
    assert (span.quote, span.category) == (target, "wrong_logical_conclusion")
