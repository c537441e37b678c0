"""Browser: a proof's own macros (`\\newcommand`, `\\renewcommand`, `\\def`,
`\\DeclareMathOperator`) typeset in that proof, hidden as definitions, and reach no other text
on the page (the statement and the verifier's analysis define or use the same names)."""

import pytest
from playwright.sync_api import expect

from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory, VerifierAnalysisFactory

UNDEFINED = ".katex [style*='#cc0000'], .katex [style*='rgb(204, 0, 0)']"
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

STATEMENT = (
    "\\newcommand{\\abs}[1]{\\lVert #1 \\rVert}\n\n"
    "Show that $\\abs{v} \\ge 0$ for every vector $v$."
)
PROOF = (
    "\\newcommand{\\R}{\\mathbf{R}}\n"
    "\\DeclareMathOperator{\\rad}{rad}\n"
    "\\renewcommand{\\phi}{\\varphi}\n"
    "\\def\\abs#1{\\left|#1\\right|}\n\n"
    "Let $x \\in \\R$ and $n = \\rad(12)$. Then $\\abs{x} \\ge 0$ and $\\phi(n) = 2$.\n\n"
    "$$\\newcommand{\\sq}[1]{{#1}^2} \\sq{x} \\ge 0$$\n\n"
    "Hence $\\sq{\\abs{x}} = x^2$."
)
ANALYSIS = (
    "The proof uses $\\R$ and $\\phi$ as usual; here \\newcommand{\\sq}{\\square} "
    "so $\\sq$ is a box.\n\n"
    "Based on my evaluation, the final overall score should be: \\boxed{1}"
)


def test_a_proofs_macros_render_in_it_and_nowhere_else(
    page, live_server, login, screenshot_dir, assert_accessible
):
    problem = ProblemFactory(external_id="MACROS-1", statement=STATEMENT)
    proof = ProofFactory(problem=problem, text=PROOF)
    VerifierAnalysisFactory(proof=proof, text=ANALYSIS)
    login(page, UserFactory(username="macros-admin", roles=["admin"]))
    page.goto(f"{live_server.url}/problems/proofs/{proof.pk}/")
    page.wait_for_selector(".proof-text .katex")
    expect(page.locator(".math:not([data-typeset])")).to_have_count(0)
    assert page.locator(".katex-error, .math-error").count() == 0
    # an undefined command would be typeset in KaTeX's error colour, not as .katex-error
    assert page.locator(UNDEFINED).count() == 0

    proof_text = page.locator(".proof-text")
    # the definitions are not shown, as text or as typeset math
    assert "newcommand" not in proof_text.inner_text()
    assert "DeclareMathOperator" not in proof_text.inner_text()
    assert proof_text.locator(".math.define").count() == 4
    for definition in proof_text.locator(".math.define").all():
        expect(definition).to_be_hidden()
    # the proof's macros, typeset: \R bold, \rad upright, \abs bars, \phi varphi, \sq a square
    assert proof_text.locator(".katex .mathbf").first.inner_text() == "R"
    assert "rad" in proof_text.locator(".katex .mop").all_inner_texts()
    assert "∣" in proof_text.inner_text() or "|" in proof_text.inner_text()
    assert "φ" in proof_text.inner_text()  # \varphi
    assert proof_text.locator(".katex-display").count() == 1

    # the statement's own \abs is a norm; the proof's bars never reach it
    statement = page.locator(".statement")
    assert "∥" in statement.inner_text()
    assert "newcommand" not in statement.inner_text()
    # the analysis sees KaTeX's own \R (blackboard bold) and \phi, and its own \sq
    analysis = page.locator(".analysis .prose")
    assert analysis.locator(".katex .mathbb").count() == 1
    assert analysis.locator(".katex .mathbf").count() == 0
    assert "ϕ" in analysis.inner_text()
    assert "□" in analysis.inner_text() or "◻" in analysis.inner_text()
    assert "newcommand" not in analysis.inner_text()
    page.screenshot(path=str(screenshot_dir / "proof-macros.png"), full_page=True)
    assert_accessible(page)


def test_a_macro_that_expands_without_end_is_an_error_in_its_formula_only(page, live_server, login):
    text = "\\def\\loop{\\loop\\loop}\n\nFirst $\\loop$, then $\\frac{1}{2}$ renders."
    problem = ProblemFactory(external_id="MACROS-2")
    proof = ProofFactory(problem=problem, text=text)
    login(page, UserFactory(username="macros-admin2", roles=["admin"]))
    page.goto(f"{live_server.url}/problems/proofs/{proof.pk}/")
    page.wait_for_selector(".proof-text .katex")
    expect(page.locator(".math:not([data-typeset])")).to_have_count(0)
    assert page.locator(".proof-text .katex-error").count() == 1
    assert page.locator(".proof-text .katex .mfrac").count() == 1
    assert page.locator(".statement .katex-error").count() == 0
