"""Browser flow of scheme review: an expert rates a scheme; an admin sees the ratings side by
side, edits the scheme (an invalid edit is saved as a draft with its problems in words and
cannot be approved), fixes it and approves it."""

import pytest

from rubrics.models import MarkingScheme, SchemeMethod, SchemeRating, SchemeStatus
from rubrics.services import scheme_version_create
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ReferenceSolutionFactory
from tests.rubrics.factories import VALID_SCHEME

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

OVER_SEVEN = VALID_SCHEME.replace("(3 pts) **Key identity**", "(5 pts) **Key identity**")
FIXED = VALID_SCHEME.replace("Cap at 5/7", "Cap at 4/7")


def fits_the_width(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def log_out(page):
    page.click("form.logout button[type=submit]")
    page.wait_for_url("**/accounts/login/**")


def test_expert_rates_admin_edits_and_approves(
    page, live_server, login, screenshot_dir, assert_accessible
):
    problem = ProblemFactory(
        external_id="E2E-SCHEME-1",
        statement=r"Let $a_1 = 1$ and $a_{n+1} = a_n + 2^n$. Prove that $a_n = 2^n - 1$.",
    )
    ReferenceSolutionFactory(
        problem=problem, text=r"By induction: $a_{n+1} = 2^n - 1 + 2^n = 2^{n+1} - 1$."
    )
    scheme = scheme_version_create(
        problem=problem, text=VALID_SCHEME, method=SchemeMethod.PROOFBENCH
    )

    # An expert rates it through the htmx form.
    login(page, UserFactory(username="expert-scheme", roles=["expert"]))
    page.click("nav.mainnav >> text=Marking schemes")
    page.click("a.scheme-link >> text=E2E-SCHEME-1")
    page.wait_for_selector(".checklist .katex")
    assert page.locator(".katex-error, .math-error").count() == 0
    assert page.locator(".chain-total").inner_text().startswith("7 / 7")
    assert page.locator("#edit-scheme").count() == 0
    page.check("input[name=score][value='1']")
    page.fill("textarea[name=comment]", "The cap needs the equality case spelled out.")
    page.click(".rate-form button[type=submit]")
    page.wait_for_selector("text=Your rating is saved.")
    page.screenshot(path=str(screenshot_dir / "scheme-expert-rated.png"), full_page=True)
    assert_accessible(page)
    assert SchemeRating.objects.get().score == 1
    log_out(page)

    # The admin sees the rating, edits the scheme into an invalid one: saved, refused approval.
    login(page, UserFactory(username="admin-scheme", roles=["admin"]))
    page.goto(f"{live_server.url}/rubrics/{scheme.pk}/")
    page.wait_for_selector(".ratings-table")
    assert "expert-scheme" in page.locator(".ratings-table").inner_text()
    page.click("#edit-scheme")
    page.fill("textarea[name=text]", OVER_SEVEN)
    page.click("#edit-form button[type=submit]")
    page.wait_for_selector("text=Saved as draft version 2, which cannot be approved yet")
    assert "Problems to fix before approval" in page.locator(".validation").inner_text()
    page.click("#approve-scheme")
    page.wait_for_selector(".messages li.error")
    assert "cannot be approved while it has problems" in page.locator(".messages").inner_text()
    assert fits_the_width(page)
    page.screenshot(path=str(screenshot_dir / "scheme-invalid-refused.png"), full_page=True)
    assert_accessible(page)

    # Fixed in a third version, whose diff against version 2 is shown, then approved.
    page.click("#edit-scheme")
    page.fill("textarea[name=text]", FIXED)
    page.click("#edit-form button[type=submit]")
    page.wait_for_selector("text=Saved as version 3 (a draft, valid).")
    assert page.locator(".diff-add").count() >= 1 and page.locator(".diff-remove").count() >= 1
    page.click("#approve-scheme")
    page.wait_for_selector("text=Version 3 is now the approved scheme of E2E-SCHEME-1;")
    assert page.locator(".meta .tag.status-approved").count() == 1
    assert fits_the_width(page)
    page.screenshot(path=str(screenshot_dir / "scheme-approved.png"), full_page=True)
    page.screenshot(path=str(screenshot_dir / "scheme-approved-top.png"), full_page=False)
    assert_accessible(page)

    versions = MarkingScheme.objects.filter(problem=problem).order_by("version")
    assert [v.status for v in versions] == [
        SchemeStatus.DRAFT,
        SchemeStatus.DRAFT,
        SchemeStatus.APPROVED,
    ]
    assert versions[2].previous == versions[1]

    page.click("nav.mainnav >> text=Marking schemes")
    page.wait_for_selector("a.scheme-link")
    assert "v3" in page.locator("table.schemes tbody tr").first.inner_text()
    page.screenshot(path=str(screenshot_dir / "scheme-list.png"), full_page=True)
    assert_accessible(page)
    page.goto(f"{live_server.url}/rubrics/ratings/")
    page.wait_for_selector("table.ratings-summary")
    page.screenshot(path=str(screenshot_dir / "scheme-ratings-dashboard.png"), full_page=True)
    assert_accessible(page)
