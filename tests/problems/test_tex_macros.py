"""A text's own macros: found, written as KaTeX reads them, hidden, and scoped to the text."""

import html
import re

import pytest

from problems.rendering import preview_markdown, preview_text, render_markdown_uncached
from problems.tex_macros import (
    MAX_DEFINITION_CHARS,
    MAX_DEFINITIONS,
    definition_at,
    definitions_normalised,
    definitions_split,
)

DEFINE_RE = re.compile(r'<span class="math define" data-tex-scope="([0-9a-f]{16})">(.*?)</span>')


@pytest.mark.parametrize(
    ("source", "tex"),
    [
        (r"\newcommand{\R}{\mathbb{R}}", r"\def\R{\mathbb{R}}"),
        (r"\newcommand\R{\mathbb{R}}", r"\def\R{\mathbb{R}}"),
        (r"\newcommand*{\R} {\mathbb{R}}", r"\def\R{\mathbb{R}}"),
        (r"\renewcommand{\vec}[1]{\mathbf{#1}}", r"\def\vec#1{\mathbf{#1}}"),
        (r"\providecommand{\f}[2]{#1^{#2}}", r"\def\f#1#2{#1^{#2}}"),
        (r"\newcommand{\p}[2][n]{#1_{#2}}", r"\def\p#1{{n}_{#1}}"),
        (r"\DeclareMathOperator{\rad}{rad}", r"\def\rad{\operatorname{rad}}"),
        (r"\DeclareMathOperator*{\argmax}{arg\,max}", r"\def\argmax{\operatorname*{arg\,max}}"),
        (r"\def\abs#1{\left|#1\right|}", r"\def\abs#1{\left|#1\right|}"),
        (r"\gdef\pair#1#2{(#1,#2)}", r"\def\pair#1#2{(#1,#2)}"),
        (r"\newcommand{\set}[1]{\{#1\}}", r"\def\set#1{\{#1\}}"),
    ],
)
def test_definitions_are_written_as_katex_reads_them(source, tex):
    definition = definition_at(source, 0)
    assert definition is not None and definition.tex == tex
    assert definition.end == len(source)


@pytest.mark.parametrize(
    "source",
    [
        r"\newcommand{\R}",  # no body
        r"\newcommand{\R}{\mathbb{R}",  # unclosed
        r"\newcommand{R}{x}",  # not a command name
        r"\newcommand{\R}[x]{y}",  # not a count
        r"\newcommandx{\R}{x}",  # another command
        r"\definecolor{red}",
        "\\newcommand{\\R}{" + "x" * MAX_DEFINITION_CHARS + "}",
    ],
)
def test_what_is_not_a_definition_stays_text(source):
    assert definition_at(source, 0) is None


def test_definitions_render_hidden_and_mark_the_texts_math_with_one_scope():
    text = (
        "\\newcommand{\\R}{\\mathbb{R}}\n\\DeclareMathOperator{\\rad}{rad}\n\n"
        "Let $x \\in \\R$ and \\[\\rad(n) \\le n.\\] Also \\def\\a{1} $\\a$."
    )
    rendered = render_markdown_uncached(text)
    defines = DEFINE_RE.findall(rendered)
    assert [html.unescape(tex) for _, tex in defines] == [
        "\\def\\R{\\mathbb{R}}",
        "\\def\\rad{\\operatorname{rad}}",
        "\\def\\a{1}",
    ]
    scopes = set(re.findall(r'data-tex-scope="([0-9a-f]+)"', rendered))
    assert len(scopes) == 1
    assert rendered.count("data-tex-scope") == 3 + 3  # three definitions, three formulas
    assert "newcommand" not in rendered and "DeclareMathOperator" not in rendered
    # a paragraph of definitions only draws no empty paragraph
    assert not rendered.startswith("<p>")
    other = render_markdown_uncached("\\newcommand{\\R}{\\mathcal{R}} $\\R$")
    assert set(re.findall(r'data-tex-scope="([0-9a-f]+)"', other)).isdisjoint(scopes)


def test_a_text_without_definitions_renders_as_before():
    assert (
        render_markdown_uncached("Let $x$ be.")
        == '<p>Let <span class="math inline">x</span> be.</p>\n'
    )


def test_definitions_inside_math_are_rewritten_in_place():
    rendered = render_markdown_uncached("$$\\newcommand{\\R}{\\mathbb{R}} x \\in \\R$$")
    assert "\\def\\R{\\mathbb{R}} x \\in \\R" in html.unescape(rendered)
    assert "data-tex-scope" in rendered
    assert definitions_normalised("x + y") == "x + y"


def test_definitions_beyond_the_limit_are_dropped():
    text = " ".join(f"\\def\\m{chr(97 + i % 26) * (i // 26 + 1)}{{{i}}}" for i in range(150))
    rendered = render_markdown_uncached(text)
    assert len(DEFINE_RE.findall(rendered)) == MAX_DEFINITIONS
    assert "\\def" not in re.sub(DEFINE_RE, "", rendered)


def test_previews_leave_the_definitions_out_and_typeset_with_them():
    text = "\\newcommand{\\R}{\\mathbb{R}}\nLet $x \\in \\R$ " + "and so on " * 30
    assert preview_text(text, 40).startswith("Let $x \\in \\R$")
    shown = preview_markdown(text, 40)
    assert [html.unescape(t) for _, t in DEFINE_RE.findall(shown)] == ["\\def\\R{\\mathbb{R}}"]
    assert "newcommand" not in shown
    tex, rest = definitions_split(text)
    assert tex == ["\\def\\R{\\mathbb{R}}"] and rest.startswith("\nLet")


def test_definitions_cannot_reach_the_html():
    rendered = render_markdown_uncached('\\def\\x{<img src=x onerror="alert(1)">} $\\x$')
    assert "<img" not in rendered and "&lt;img" in rendered
