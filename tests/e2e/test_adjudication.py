"""Browser flow: an adjudicator opens the queue, reads a disputed case (two experts side by
side, spans in two colours, differing checkpoints highlighted), marks an error span of their
own and records a new score with a rationale."""

from decimal import Decimal

import pytest

from adjudication.models import AdjudicationCase, FinalLabel
from adjudication.services import case_return
from tests.adjudication.factories import CampaignFactory, ErrorSpanFactory, ItemFactory, judge
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
    page, live_server, login, disputed_case, screenshot_dir, assert_accessible
):
    login(page, UserFactory(username="adj-e2e", roles=["adjudicator"]))
    page.click("nav.mainnav >> text=Adjudication")
    page.click(f"#case-queue >> text=#{disputed_case.pk}")
    page.wait_for_selector("#proof-typeset")
    assert page.locator(".judgement").count() == 2
    assert page.locator("#awards tr.differs").count() == 1
    # both experts' spans on the one rendered copy; the source, with the same spans, on demand
    assert page.locator("#proof-typeset mark.layer-a").count() >= 1
    assert page.locator("#proof-typeset mark.layer-b").count() >= 1
    assert not page.locator("#proof-source").is_visible()
    page.click("#proof-source-pane > summary")
    assert page.locator("#proof-source mark.layer-a").count() >= 1
    assert page.locator("#proof-source mark.layer-b").count() >= 1
    page.screenshot(path=str(screenshot_dir / "adjudication-case.png"), full_page=True)
    assert_accessible(page)

    page.click("#span-editor > summary")
    target = "Hence for every odd"
    page.evaluate(
        """(target) => {
            const box = document.getElementById("proof-typeset");
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
    assert page.inner_text("#next-case") == "No other case waits for you."
    assert page.locator("#proof-typeset .katex").count() > 0  # the proof typeset by default
    page.screenshot(path=str(screenshot_dir / "adjudication-resolved.png"), full_page=True)
    assert_accessible(page)

    label = FinalLabel.objects.get(item=disputed_case.item)
    assert (label.value, label.source) == (Decimal("4"), "adjudication")
    span = disputed_case.spans.get()
    assert (span.quote, span.category) == (target, "wrong_logical_conclusion")


def test_expert_answers_a_returned_case(
    page, live_server, login, disputed_case, screenshot_dir, assert_accessible
):
    grade = disputed_case.item.grades.order_by("id").first()
    case_return(
        case=disputed_case,
        user=UserFactory(username="adj-q", roles=["adjudicator"]),
        question="Expert A: which step lacks the factor 8?",
    )
    login(page, grade.expert)
    page.click("nav.mainnav >> text=Discussions")
    page.click(f"text=#{disputed_case.pk}")
    page.wait_for_selector("#proof-typeset")
    assert "Complete apart from style." in page.inner_text("body")  # the other judgement
    assert "Expert A (you)" in page.inner_text("body")
    page.fill("#reply", "The second factor is only shown even, not divisible by 4.")
    page.click("form.card button[type=submit]")
    page.wait_for_selector("text=The second factor is only shown even")
    page.screenshot(path=str(screenshot_dir / "adjudication-discussion.png"), full_page=True)
    assert_accessible(page)
    assert disputed_case.events.last().actor_id == grade.expert_id


def test_admin_reads_the_dashboard_marks_gold_and_exports(
    page, live_server, login, transactional_db, screenshot_dir, assert_accessible
):
    campaign = CampaignFactory(name="Calibration 1", double_share=Decimal("1"))
    experts = [UserFactory(username=f"grader-{n}", roles=["expert"]) for n in range(3)]
    for scores in [(7, 7, 6), (3, 5, 4), (0, 1, 0), (6, 2, 5), (4, 4, 4), (2, 3, 2)]:
        judge(ItemFactory(campaign=campaign, required_judgements=3), *scores, experts=experts)
    login(page, UserFactory(username="admin-e2e", roles=["admin"]))
    page.goto(f"{live_server.url}/adjudication/campaigns/")
    page.click("tr:has-text('Calibration 1') >> text=Agreement")
    page.wait_for_selector("#confusion")
    assert "calibration round" in page.inner_text("h1")
    assert page.locator("#pairs tbody tr").count() == 3
    # each expert's bias and error against the final labels, by week: a table and its plots
    assert page.locator("#drift-table tbody tr").count() == 3
    assert page.locator("#drift svg.chart").count() == 3
    page.screenshot(path=str(screenshot_dir / "adjudication-dashboard.png"), full_page=True)
    assert_accessible(page)
    with page.expect_download() as download:
        page.click("text=Export disagreements (CSV)")
    assert download.value.suggested_filename.endswith("-disagreements.csv")
    page.click("text=Labels and gold")
    page.locator("#labels tbody tr").filter(has_text="agreement").first.locator(
        "text=mark gold"
    ).click()
    page.wait_for_selector("text=is now gold")
    page.screenshot(path=str(screenshot_dir / "adjudication-labels.png"), full_page=True)
    assert_accessible(page)


def test_a_band_case_takes_one_band_worth_the_score(
    page, live_server, login, real_fixtures, screenshot_dir, assert_accessible
):
    """On a band scheme (IMO-ProofBench's guidelines) the new-score form offers one band, as
    radios; a band whose points are not the score is refused with the reason, and the form
    comes back as it was sent (the rationale is not lost); Enter in the rationale is a new
    line, not a submission."""
    import csv

    from rubrics.structure import parse_scheme
    from tests.annotation.factories import approved_scheme

    with (real_fixtures / "imobench" / "proofbench_v2.csv").open(newline="") as handle:
        row = next(r for r in csv.DictReader(handle) if r["Problem ID"] == "PB-Basic-001")
    item = ItemFactory(proof=ProofFactory(text=PROOF))
    bands, _ = parse_scheme(row["Grading guidelines"], "imobench_guidelines")
    scheme = approved_scheme(item.proof.problem)
    scheme.structure = bands.to_dict()
    scheme.save()
    item.scheme = scheme
    item.save()
    judge(item, 1, 7)
    case = AdjudicationCase.objects.get(item=item)
    login(page, UserFactory(username="adj-band", roles=["adjudicator"]))
    page.goto(f"{live_server.url}/adjudication/cases/{case.pk}/")
    assert page.locator(".band-picks input[name=band]").count() == 5  # none + four bands
    page.select_option("#new-score", label="6")
    page.check('.band-picks input[value="partial"]')
    page.fill("#new-rationale", "Almost: the constant is not checked.")
    page.click("#new-score-form button.primary")
    assert "the Partial band gives 1, not 6" in page.inner_text("ul.messages")
    assert not FinalLabel.objects.filter(item=item).exists()
    assert page.input_value("#new-rationale") == "Almost: the constant is not checked."
    assert page.locator("#new-score option:checked").inner_text() == "6"
    assert page.locator('.band-picks input[value="partial"]').is_checked()
    page.check('.band-picks input[value="almost"]')
    page.screenshot(path=str(screenshot_dir / "adjudication-band-case.png"), full_page=True)
    assert_accessible(page)
    page.press("#new-rationale", "Enter")  # a new line, not a submit: the textarea keeps it
    assert not FinalLabel.objects.filter(item=item).exists()
    page.click("#new-score-form button.primary")
    page.wait_for_selector("#resolution")
    case.refresh_from_db()
    assert (case.score, case.awards) == (Decimal("6"), {"almost": "6"})
    assert FinalLabel.objects.get(item=item).value == Decimal("6")
