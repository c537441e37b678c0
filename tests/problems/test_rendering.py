import html
import re

import pytest
from django.core.cache import cache
from django.template import Context, Template

from problems import rendering
from problems.rendering import render_markdown, render_markdown_uncached
from tests.problems.real_texts import corpus_texts

MATH_RE = re.compile(r'<(span|div) class="math (inline|block)">(.*?)</\1>', re.S)


def maths(rendered: str) -> list[tuple[str, str, str]]:
    """(tag, kind, TeX) for each math element, TeX unescaped as the browser's textContent."""
    return [(tag, kind, html.unescape(tex)) for tag, kind, tex in MATH_RE.findall(rendered)]


def outside_math(rendered: str) -> str:
    return MATH_RE.sub("", rendered)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Let $x^2 < y$ hold.", [("span", "inline", "x^2 < y")]),
        (r"Let \(a_1 < b\) hold.", [("span", "inline", "a_1 < b")]),
        ("$$\n\\sum_{i=1}^n i\n$$", [("div", "block", "\\sum_{i=1}^n i")]),
        ("\\[\n\\frac12 + \\frac12 = 1\n\\]", [("div", "block", "\\frac12 + \\frac12 = 1")]),
        ("Thus $$a=b$$ holds.", [("span", "block", "a=b")]),
        (r"Thus \[a=b\]holds.", [("span", "block", "a=b")]),
    ],
    ids=["dollar", "paren", "double-dollar", "bracket", "double-dollar-inline", "bracket-inline"],
)
def test_all_four_delimiter_styles(source, expected):
    assert maths(render_markdown_uncached(source)) == expected


def test_markdown_inside_math_is_left_alone():
    rendered = render_markdown_uncached(r"Both $a_1 * b_2 * c$ and \(x_{i}^{*}\) stay TeX.")
    assert [tex for _, _, tex in maths(rendered)] == ["a_1 * b_2 * c", "x_{i}^{*}"]
    assert "<em>" not in rendered


def test_bracket_display_math_may_hold_blank_lines():
    rendered = render_markdown_uncached("Before.\n\n\\[\na = b\n\nc = d\n\\]\n\nAfter.")
    assert maths(rendered) == [("div", "block", "a = b\n\nc = d")]
    assert "<p>After.</p>" in rendered


@pytest.mark.parametrize("env", ["align*", "align", "equation*", "gather", "alignat*"])
def test_top_level_math_environments_are_display_math(env):
    source = f"We have\n\\begin{{{env}}}\na &= b \\\\\nc &= d\n\\end{{{env}}}\nso done."
    rendered = render_markdown_uncached(source)
    assert maths(rendered) == [
        ("div", "block", f"\\begin{{{env}}}\na &= b \\\\\nc &= d\n\\end{{{env}}}")
    ]
    assert "<p>We have</p>" in rendered and "<p>so done.</p>" in rendered


def test_environments_katex_lacks_are_mapped_to_ones_it_has():
    rendered = render_markdown_uncached("\\begin{multline*}\na+b\\\\\n=c\n\\end{multline*}")
    assert maths(rendered) == [("div", "block", "\\begin{gather*}\na+b\\\\\n=c\n\\end{gather*}")]


def test_bare_inner_environment_and_blank_lines_inside_math_environments():
    source = "so $f(x)=\\begin{cases}\n 0 & 2|x\n\n 1 & 2\\nmid x\n\\end{cases}$ as claimed"
    rendered = render_markdown_uncached(source)
    [(tag, kind, tex)] = maths(rendered)
    assert (tag, kind) == ("span", "inline")
    assert tex.startswith("f(x)=\\begin{cases}") and "\n\n" not in tex


def test_itemize_and_enumerate_become_lists():
    source = (
        "Steps: \\begin{enumerate} \\item First $a$. \\item Second, with\n"
        "\\begin{itemize}\n\\item a nested point\n\\end{itemize}\n\\end{enumerate} Done."
    )
    rendered = render_markdown_uncached(source)
    assert rendered.count("<ol>") == 1 and rendered.count("<ul>") == 1
    assert rendered.count("<li>") == 3
    assert '<li>First <span class="math inline">a</span>.</li>' in rendered
    assert "\\item" not in rendered and "\\begin" not in outside_math(rendered)
    assert "<p>Done.</p>" in rendered


def test_text_markup_sections_and_proof_environment():
    source = (
        "\\section*{Solution}\n\\noindent\\textbf{Claim.} \\emph{It holds} for $n$.\\\\\n"
        "Next line \\qed\n\n\\begin{proof}\nTrivial.\n\\end{proof}"
    )
    rendered = render_markdown_uncached(source)
    assert "<h3>Solution</h3>" in rendered
    assert "<strong>Claim.</strong> <em>It holds</em>" in rendered
    assert "<br>" in rendered and "\u220e" in rendered
    assert "<em>Proof.</em> Trivial." in rendered
    assert "\\" not in outside_math(rendered)


def test_latex_quotes_are_not_code():
    rendered = render_markdown_uncached("each student `loves' some; ``quoted'' and `code`")
    assert "\u2018loves\u2019" in rendered and "\u201cquoted\u201d" in rendered
    assert rendered.count("<code>") == 1


def test_doubly_escaped_brackets_from_model_output():
    rendered = render_markdown_uncached("Factor:\n\\\\[ (x+y)(x-y)^2 \\\\]\nSo it is positive.")
    assert maths(rendered) == [("span", "block", "(x+y)(x-y)^2")]


@pytest.mark.parametrize(
    "source",
    [r"unclosed \( a + b", r"unclosed \[ a + b", "unclosed $ a + b", "$$\na + b"],
)
def test_unclosed_delimiters_stay_text(source):
    rendered = render_markdown_uncached(source)
    assert maths(rendered) == []
    assert "a + b" in rendered


XSS_CORPUS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    '<img src="x" onerror="alert(1)">',
    '<a href="javascript:alert(1)">click</a>',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click]( javascript:alert(1) )",
    "[click](&#106;avascript:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](vbscript:msgbox(1))",
    "![pic](javascript:alert(1))",
    "![pic](data:image/png;base64,iVBORw0KGgo=)",
    "<javascript:alert(1)>",
    "[ref]\n\n[ref]: javascript:alert(1)",
    '<div style="background:url(javascript:alert(1))" onclick="alert(1)">x</div>',
    "<iframe src=//evil.example></iframe>",
    "<svg onload=alert(1)>",
    "$<script>alert(1)</script>$",
    "$$<img src=x onerror=alert(1)>$$",
    r"\(<b onmouseover=alert(1)>x</b>\)",
    "\\begin{align*}</div><script>alert(1)</script>\\end{align*}",
    "\\textbf{<script>alert(1)</script>}",
    "`<script>alert(1)</script>`",
    "```html\n<script>alert(1)</script>\n```",
    '<p onclick="alert(1)">para</p>',
    "<style>body{display:none}</style>",
    "<!-- <script>alert(1)</script> -->",
    '<form action="javascript:alert(1)"><input></form>',
    '<math><mi xlink:href="javascript:alert(1)">x</mi></math>',
]


@pytest.mark.parametrize("source", XSS_CORPUS)
def test_xss_corpus_yields_no_active_content(source):
    rendered = render_markdown_uncached(source)
    tags = re.findall(r"<\s*([a-zA-Z0-9]+)", rendered)
    assert set(tags) <= rendering.ALLOWED_TAGS
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", rendered, re.I)
    assert not re.search(r"<[^>]*\sstyle\s*=", rendered, re.I)
    for href in re.findall(r'<a\s[^>]*href="([^"]*)"', rendered):
        assert html.unescape(href).strip().lower().startswith(("http:", "https:", "mailto:", "/"))
    assert "<img" not in rendered and "<script" not in rendered.lower()


def test_html_inside_math_reaches_katex_as_text():
    rendered = render_markdown_uncached("$<script>alert(1)</script>$")
    assert maths(rendered) == [("span", "inline", "<script>alert(1)</script>")]
    assert "&lt;script&gt;" in rendered


def test_safe_links_survive_with_rel():
    rendered = render_markdown_uncached("[paper](https://example.org/p.pdf) and [here](/problems/)")
    assert 'href="https://example.org/p.pdf"' in rendered and 'href="/problems/"' in rendered
    assert 'rel="noopener noreferrer nofollow"' in rendered


def test_images_become_links_not_remote_loads():
    rendered = render_markdown_uncached("![diagram](https://example.org/d.png)")
    assert "<img" not in rendered
    assert '<a href="https://example.org/d.png"' in rendered and "[image: diagram]" in rendered


def test_tables_render_without_style():
    rendered = render_markdown_uncached("| n | $f(n)$ |\n|--:|:-:|\n| 1 | 2 |")
    assert "<table>" in rendered and "style" not in rendered
    assert maths(rendered) == [("span", "inline", "f(n)")]


def test_render_is_cached_per_text(monkeypatch):
    cache.clear()
    calls = []

    def counting(text):
        calls.append(text)
        return f"<p>{len(calls)}</p>"

    monkeypatch.setattr(rendering, "render_markdown_uncached", counting)
    assert render_markdown("one") == render_markdown("one") == "<p>1</p>"
    assert render_markdown("two") == "<p>2</p>"
    assert calls == ["one", "two"]
    assert render_markdown("") == ""


def test_markdown_filter_renders_and_marks_safe():
    template = Template("{% load proofmark %}{{ text|markdown }}")
    out = template.render(Context({"text": "**bold** $x<y$ <script>x</script>"}))
    assert "<strong>bold</strong>" in out
    assert '<span class="math inline">x&lt;y</span>' in out
    assert "<script>" not in out
    assert Template("{% load proofmark %}[{{ text|markdown }}]").render(Context({})) == "[]"


# --- The real corpora: every LaTeX construct they use renders, nothing is left as raw TeX ---


def test_real_corpora_leave_no_latex_outside_math(real_fixtures):
    texts = corpus_texts(real_fixtures)
    assert len(texts) > 190
    for name, text in texts:
        rendered = render_markdown_uncached(text)
        leftovers = re.findall(
            r"\\(?:begin|end|item|frac|textbf|emph|\[|\(|\]|\))", outside_math(rendered)
        )
        assert not leftovers, f"{name}: {leftovers[:5]}"


def test_real_matharena_solution_keeps_its_displays(real_fixtures):
    text = (real_fixtures / "matharena_usamo2025" / "solutions" / "1.tex").read_text()
    rendered = render_markdown_uncached(text)
    kinds = [kind for _, kind, _ in maths(rendered)]
    assert kinds.count("block") == 2 and kinds.count("inline") > 10
    assert "Note that the numerator" in rendered


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("Short $x$.", 160, "Short $x$."),
        ("Let $a$ and\n\n$$\\frac{a}{b} \\ge 3$$ hold for all reals", 30, "Let $a$ and \u2026"),
        ("Consider \\(x_1 + x_2 + \\dots + x_n\\) for long", 24, "Consider \u2026"),
        ("A \\begin{align*} a &= b \\end{align*} done", 25, "A \u2026"),
    ],
)
def test_preview_never_cuts_math_in_half(text, limit, expected):
    assert rendering.preview_text(text, limit) == expected


def test_preview_filter_renders_the_math_it_keeps():
    out = Template("{% load proofmark %}{{ text|preview:20 }}").render(
        Context({"text": "Let $x>0$ be a real number with a long tail of words"})
    )
    assert '<span class="math inline">x&gt;0</span>' in out and "\u2026" in out


@pytest.mark.parametrize(
    "source",
    [
        "\\begin{itemize}\n" * 300 + "\\item deep\n" + "\\end{itemize}\n" * 300,
        "\\textbf{" * 500 + "deep" + "}" * 500,
        "\\begin{quote}\n" * 300 + "deep\n" + "\\end{quote}\n" * 300,
    ],
    ids=["itemize", "textbf", "quote"],
)
def test_deep_nesting_renders_instead_of_crashing(source):
    rendered = render_markdown_uncached(source)
    assert "deep" in rendered


def test_markdown_nesting_beyond_the_parser_limit_does_not_crash():
    assert render_markdown_uncached("> " * 3000 + "deep").startswith("<blockquote>")


@pytest.mark.parametrize(
    "source",
    ["\\( " * 3000, "\\[\n" * 3000, "\\textbf{ " * 3000, "\\begin{cases} a " * 3000, "$ " * 3000],
    ids=["paren", "bracket-lines", "textbf", "cases", "dollar"],
)
def test_many_unclosed_openers_stay_text(source):
    rendered = render_markdown_uncached(source)
    assert maths(rendered) == [] or all(kind == "inline" for _, kind, _ in maths(rendered))
    assert len(rendered) >= len(source) // 2


def test_several_tags_in_a_bare_aligned_become_align_star():
    source = "\\[\n\\begin{aligned}\na&=b \\tag{1}\\\\\nc&=d \\tag{2}\n\\end{aligned}\n\\]"
    [(_, _, tex)] = maths(render_markdown_uncached(source))
    assert tex == "\\begin{align*}\na&=b \\tag{1}\\\\\nc&=d \\tag{2}\n\\end{align*}"
    single = "\\[\\begin{aligned}a&=b \\tag{1}\\end{aligned}\\]"
    assert maths(render_markdown_uncached(single))[0][2] == single[2:-2]
