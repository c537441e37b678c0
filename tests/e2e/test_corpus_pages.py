"""Browser flows through the corpus pages: log in, list, filter, open a problem and a proof, and
see the math typeset by KaTeX; nothing is loaded from off the machine."""

from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from problems.demo.loader import demo_corpus_load
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory, ReferenceSolutionFactory
from tests.problems.real_texts import corpus_texts

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo_corpus(transactional_db):
    demo_corpus_load()


@pytest.fixture
def offsite_requests(page, live_server):
    """Every request the page makes to a host other than the live server."""
    here = urlparse(live_server.url).netloc
    seen: list[str] = []
    page.on(
        "request",
        lambda request: (
            seen.append(request.url) if urlparse(request.url).netloc not in ("", here) else None
        ),
    )
    return seen


def fits_the_width(page) -> bool:
    """No horizontal scrolling at the laptop width the browser fixture uses (1366 px)."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def rows(page) -> list[str]:
    return page.locator("a.problem-link").all_inner_texts()


def test_expert_filters_problems_and_reads_a_proof_with_typeset_math(
    page, live_server, login, demo_corpus, screenshot_dir, offsite_requests, assert_accessible
):
    login(page, UserFactory(username="expert-e2e", roles=["expert"]))
    page.click("nav.mainnav >> text=Problems")
    page.wait_for_selector("a.problem-link")
    assert len(rows(page)) == 6
    assert fits_the_width(page)
    page.screenshot(path=str(screenshot_dir / "corpus-problem-list.png"), full_page=True)
    assert_accessible(page)

    page.select_option("#id_topic", "G")
    expect(page.locator("a.problem-link")).to_have_count(1)
    assert rows(page) == ["DEMO-2024-G1"]
    assert "topic=G" in page.url

    page.select_option("#id_topic", "")
    expect(page.locator("a.problem-link")).to_have_count(6)
    page.keyboard.press("/")
    page.keyboard.type("party")
    expect(page.locator("a.problem-link")).to_have_count(1)
    assert rows(page) == ["DEMO-2025-C2"]

    page.click("a.problem-link")
    page.wait_for_selector(".prose .katex")
    assert page.locator("h1").inner_text() == "DEMO-2025-C2"
    assert page.locator(".katex").count() > 5
    assert page.locator(".katex-error, .math-error").count() == 0
    assert fits_the_width(page)
    page.screenshot(path=str(screenshot_dir / "corpus-problem.png"), full_page=True)
    assert_accessible(page)

    page.locator("a.proof-link").first.click()
    page.wait_for_selector(".proof-text .katex")
    assert page.locator(".proof-text .katex").count() > 3
    assert page.locator(".katex-error, .math-error").count() == 0
    # An expert grades blind: no analysis, rating or model on the corpus (core.visibility).
    assert page.locator(".analysis, .ratings").count() == 0
    assert page.locator("#blind-note").is_visible()
    assert not page.locator("h1").inner_text().startswith("Proof by")
    assert fits_the_width(page)
    page.screenshot(path=str(screenshot_dir / "corpus-proof.png"), full_page=False)
    page.screenshot(path=str(screenshot_dir / "corpus-proof-full.png"), full_page=True)
    assert_accessible(page)

    first_proof = page.url
    page.keyboard.press("]")
    page.wait_for_url(lambda url: url != first_proof)
    page.wait_for_selector(".proof-text .katex")
    page.keyboard.press("[")
    page.wait_for_url(first_proof)
    page.keyboard.press("u")
    page.wait_for_url(f"{live_server.url}/problems/DEMO-2025-C2/")
    assert offsite_requests == []


def test_every_display_of_the_demo_corpus_typesets_without_errors(
    page, live_server, login, demo_corpus, assert_accessible
):
    login(page, UserFactory(username="reader-e2e", roles=["researcher"]))
    page.goto(f"{live_server.url}/problems/")
    problem_urls = [a.get_attribute("href") for a in page.locator("a.problem-link").all()]
    scored = 0
    for url in problem_urls:
        page.goto(live_server.url + url)
        page.wait_for_selector(".prose .katex")
        assert page.locator(".katex-error, .math-error").count() == 0, url
        for proof_url in [a.get_attribute("href") for a in page.locator("a.proof-link").all()]:
            page.goto(live_server.url + proof_url)
            page.wait_for_selector(".proof-text .katex")
            assert page.locator(".katex-error, .math-error").count() == 0, proof_url
            assert page.locator(".math:not([data-typeset])").count() == 0, proof_url
            assert fits_the_width(page), proof_url
            scored += page.locator(".analysis summary .tag", has_text="score").count()
    assert scored > 0  # a researcher reads the verifier's analyses and scores
    assert_accessible(page)


def test_htmx_pagination_keeps_the_filters(
    page, live_server, login, screenshot_dir, assert_accessible
):
    ProblemFactory.create_batch(30, contest="Paged Contest", year=2023)
    ProblemFactory.create_batch(3, contest="Other Contest", year=2023)
    login(page, UserFactory(username="admin-e2e", roles=["admin"]))
    page.goto(f"{live_server.url}/problems/")
    page.select_option("#id_contest", "Paged Contest")
    page.wait_for_selector("text=30 problems match the filters")
    page.click("a[rel=next]")
    page.wait_for_selector("text=Page 2 of 2")
    assert len(rows(page)) == 5
    assert "contest=Paged+Contest" in page.url and "page=2" in page.url
    assert page.locator("header.topbar").count() == 1
    page.screenshot(path=str(screenshot_dir / "corpus-problem-list-page2.png"), full_page=True)
    assert_accessible(page)


def test_api_docs_render_from_our_own_files(
    page, live_server, login, offsite_requests, screenshot_dir, assert_accessible
):
    login(page, UserFactory(username="researcher-e2e", roles=["researcher"]))
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector("text=/api/v1/problems/")
    assert page.locator("article.api-op").count() >= 20
    page.click("#schema-Error > summary")
    assert "detail" in page.inner_text("#schema-Error")
    assert offsite_requests == []
    page.screenshot(path=str(screenshot_dir / "api-docs.png"))
    assert_accessible(page)


def test_real_corpora_typeset_without_katex_errors(
    page, live_server, login, real_fixtures, assert_accessible
):
    """Every statement, solution and proof of the real sample files, in the browser."""
    texts = corpus_texts(real_fixtures)
    problem = ProblemFactory(external_id="REAL-ALL", statement=texts[0][1])
    solutions = [text for label, text in texts if "proof" not in label and "attempt" not in label]
    for text in solutions:
        ReferenceSolutionFactory(problem=problem, text=text)
    proofs = [
        ProofFactory(problem=problem, text=text)
        for label, text in texts
        if "proof" in label or "attempt" in label
    ]
    assert len(solutions) > 150 and len(proofs) >= 10
    login(page, UserFactory(username="real-e2e", roles=["expert"]))
    for url in [f"/problems/{problem.external_id}/"] + [
        f"/problems/proofs/{p.pk}/" for p in proofs
    ]:
        page.goto(live_server.url + url)
        page.wait_for_selector(".prose .katex")
        assert page.locator(".math:not([data-typeset])").count() == 0, url
        errors = page.locator(".katex-error, .math-error").all_inner_texts()
        assert errors == [], f"{url}: {errors[:3]}"
    assert_accessible(page)
