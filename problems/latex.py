"""markdown-it rules for the LaTeX that proofs and statements in the corpus are written in.

Math in every delimiter style becomes `math_inline` / `math_inline_double` / `math_block` tokens
(the same token types as mdit-py-plugins' dollarmath, which handles `$..$` and `$$..$$`):
`\\(..\\)`, `\\[..\\]`, and math environments written without delimiters
(`\\begin{align*}..\\end{align*}`, `equation*`, `gather`, bare `aligned` or `cases`...).
LaTeX text markup that the sources use outside math becomes Markdown structure: `itemize` /
`enumerate` / `description` lists, `center` / `quote` / `proof` / theorem-like environments,
`\\section*{..}` headings, `\\textbf`, `\\emph`..., `\\boxed{..}` (as math: verifiers box
their score in text), `\\\\` line breaks and LaTeX quotes; spacing commands that mean nothing
on a web page are dropped.
"""

import re

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

# Top-level math environments, mapped to what KaTeX understands in display mode.
MATH_ENVIRONMENTS = {
    "equation": "equation",
    "equation*": "equation*",
    "align": "align",
    "align*": "align*",
    "alignat": "alignat",
    "alignat*": "alignat*",
    "gather": "gather",
    "gather*": "gather*",
    "multline": "gather",
    "multline*": "gather*",
    "flalign": "align",
    "flalign*": "align*",
    "eqnarray": "align",
    "eqnarray*": "align*",
    "displaymath": None,
    "math": None,
}
# Environments that only make sense inside math: written bare, they are displayed math.
INNER_MATH_ENVIRONMENTS = {
    "aligned", "alignedat", "gathered", "split", "cases", "dcases", "rcases", "array",
    "matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix", "smallmatrix", "CD",
}  # fmt: skip
LIST_ENVIRONMENTS = {"itemize": "bullet", "enumerate": "ordered", "description": "bullet"}
LABELLED_ENVIRONMENTS = {
    "proof": "Proof",
    "solution": "Solution",
    "theorem": "Theorem",
    "lemma": "Lemma",
    "claim": "Claim",
    "corollary": "Corollary",
    "proposition": "Proposition",
    "definition": "Definition",
    "remark": "Remark",
    "example": "Example",
    "observation": "Observation",
    "fact": "Fact",
    "note": "Note",
}
PLAIN_ENVIRONMENTS = {"center", "flushleft", "flushright", "minipage", "quote", "quotation"}

ENV_NAME = r"[A-Za-z]+\*?"
BEGIN_RE = re.compile(r"\\begin\{(" + ENV_NAME + r")\}")
SECTION_RE = re.compile(r"\\(section|subsection|subsubsection|paragraph)\*?\{(.*)\}\s*$")
COMMAND_RE = re.compile(r"\\([A-Za-z]+)\*?")
LATEX_QUOTE_RE = re.compile(r"(`{1,2})([^`'\n]{1,200}?)('{1,2})(?=[\s.,;:!?)\]]|$)")

TEXT_WRAPPERS = {
    "textbf": "strong",
    "textit": "em",
    "emph": "em",
    "textsl": "em",
    "underline": "em",
    "texttt": "code",
    "text": None,
    "textrm": None,
    "textsf": None,
    "textsc": None,
    "textup": None,
    "mbox": None,
}
TEXT_SYMBOLS = {
    "qed": "\u220e",
    "qedhere": "",
    "blacksquare": "\u220e",
    "square": "\u25a1",
    "ldots": "\u2026",
    "dots": "\u2026",
    "quad": "\u2003",
    "qquad": "\u2003\u2003",
    "noindent": "",
    "indent": "",
    "medskip": "",
    "bigskip": "",
    "smallskip": "",
    "hfill": "",
    "centering": "",
    "par": "",
    "LaTeX": "LaTeX",
    "TeX": "TeX",
}
MAX_NESTING = 8
DROPPED_WITH_ARGUMENT = {"vspace", "hspace", "label", "vskip", "hskip"}


def _escaped(src: str, index: int) -> bool:
    """Whether src[index] is preceded by an odd number of backslashes."""
    count = 0
    while index > 0 and src[index - 1] == "\\":
        count += 1
        index -= 1
    return count % 2 == 1


def find_closing(src: str, start: int, end: int, closer: str) -> int:
    """Index of the first `\\<closer>` in src[start:end] whose backslash is not itself
    escaped (`\\\\]` is a line break followed by `]`), or -1."""
    target = "\\" + closer
    index = src.find(target, start, end)
    while index >= 0 and _escaped(src, index):
        index = src.find(target, index + 1, end)
    return index


def closing_after(state, start: int, end: int, closer: str) -> int:
    """find_closing, remembering on the parser state where a search failed: a later search in
    the same text fails too, so many unclosed openers cost linear, not quadratic, time."""
    failed = state.__dict__.setdefault("_latex_failed_closers", {})
    if start >= failed.get((closer, end), end + 1):
        return -1
    index = find_closing(state.src, start, end, closer)
    if index < 0:
        failed[(closer, end)] = start
    return index


def brace_matches(state) -> dict[int, int]:
    """For each `{` of state.src, the index just past its matching `}` (escaped braces
    skipped); computed once per parser state."""
    cached = state.__dict__.get("_latex_braces")
    if cached is not None:
        return cached
    matches: dict[int, int] = {}
    stack: list[int] = []
    src = state.src
    for match in re.finditer(r"\\.|[{}]", src, re.S):
        char = match.group(0)
        if char == "{":
            stack.append(match.start())
        elif char == "}" and stack:
            matches[stack.pop()] = match.end()
    state._latex_braces = matches
    return matches


def braced_end(state, start: int, end: int) -> int:
    """Given state.src[start] == "{", the index just past its matching brace within end, or -1."""
    close = brace_matches(state).get(start, -1)
    return close if 0 <= close <= end else -1


def find_environment_end(src: str, start: int, end: int, name: str) -> tuple[int, int]:
    """(start, end) of the `\\end{name}` matching a `\\begin{name}` that ends at `start`."""
    begin_tag, end_tag = "\\begin{" + name + "}", "\\end{" + name + "}"
    depth = 1
    pos = start
    while pos < end:
        next_end = src.find(end_tag, pos, end)
        if next_end < 0:
            return -1, -1
        next_begin = src.find(begin_tag, pos, next_end)
        if next_begin >= 0:
            depth += 1
            pos = next_begin + len(begin_tag)
            continue
        depth -= 1
        if depth == 0:
            return next_end, next_end + len(end_tag)
        pos = next_end + len(end_tag)
    return -1, -1


def display_tex(name: str, body: str) -> str:
    """The TeX KaTeX gets for a bare environment `name` with contents `body`."""
    if name in INNER_MATH_ENVIRONMENTS:
        return f"\\begin{{{name}}}{body}\\end{{{name}}}"
    mapped = MATH_ENVIRONMENTS[name]
    if mapped is None:
        return body.strip()
    return f"\\begin{{{mapped}}}{body}\\end{{{mapped}}}"


TAGGED_INNER_RE = re.compile(r"\s*\\begin\{(aligned|gathered)\}(.*)\\end\{\1\}\s*", re.S)


def display_fixups(tex: str) -> str:
    """Display TeX that KaTeX would reject but means something clear: `\\tag` on several rows of
    a bare `aligned` / `gathered` (as models write) becomes `align*` / `gather*`."""
    match = TAGGED_INNER_RE.fullmatch(tex)
    if match and match.group(2).count("\\tag") > 1:
        name = "align*" if match.group(1) == "aligned" else "gather*"
        return f"\\begin{{{name}}}{match.group(2)}\\end{{{name}}}"
    return tex


def is_math_environment(name: str) -> bool:
    return name in MATH_ENVIRONMENTS or name in INNER_MATH_ENVIRONMENTS


# --- block rules -------------------------------------------------------------------------


def _line_of(state: StateBlock, index: int, start_line: int, end_line: int) -> int:
    for line in range(start_line, end_line):
        if index <= state.eMarks[line]:
            return line
    return -1


def _rest_is_blank(state: StateBlock, line: int, index: int) -> bool:
    return not state.src[index : state.eMarks[line]].strip()


def bracket_math_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """`\\[ ... \\]` starting a line, closing at the end of a line (blank lines allowed)."""
    if state.is_code_block(start_line):
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    if not state.src.startswith("\\[", begin):
        return False
    limit = state.eMarks[end_line - 1]
    close = closing_after(state, begin + 2, limit, "]")
    if close < 0:
        return False
    last_line = _line_of(state, close, start_line, end_line)
    if last_line < 0 or not _rest_is_blank(state, last_line, close + 2):
        return False
    if silent:
        return True
    token = state.push("math_block", "math", 0)
    token.block = True
    token.content = state.src[begin + 2 : close].strip()
    token.markup = "\\["
    token.map = [start_line, last_line + 1]
    state.line = last_line + 1
    return True


def environment_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """`\\begin{name} ... \\end{name}` starting a line: math, a list, or a text environment."""
    if state.is_code_block(start_line):
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    match = BEGIN_RE.match(state.src, begin)
    if not match:
        return False
    name = match.group(1)
    text_environment = (
        name in LIST_ENVIRONMENTS or name in LABELLED_ENVIRONMENTS or name in PLAIN_ENVIRONMENTS
    )
    if not (is_math_environment(name) or (text_environment and not _too_deep(state))):
        return False
    body_end, env_end = find_environment_end(
        state.src, match.end(), state.eMarks[end_line - 1], name
    )
    if body_end < 0:
        return False
    last_line = _line_of(state, env_end, start_line, end_line)
    if last_line < 0 or not _rest_is_blank(state, last_line, env_end):
        return False
    if silent:
        return True
    body = state.src[match.end() : body_end]
    if is_math_environment(name):
        token = state.push("math_block", "math", 0)
        token.block = True
        token.content = display_tex(name, body)
        token.markup = name
        token.map = [start_line, last_line + 1]
    elif name in LIST_ENVIRONMENTS:
        _push_list(state, name, body)
    else:
        _push_text_environment(state, name, body)
    state.line = last_line + 1
    return True


def _dedent(text: str) -> str:
    return "\n".join(line.strip() for line in text.splitlines()).strip()


def _split_items(body: str) -> list[str]:
    """The `\\item`s of a list body, ignoring those of nested environments; text before the
    first `\\item` (a nested list, say) is kept as an item of its own."""
    preamble: list[str] = []
    items: list[list[str]] = [preamble]
    depth = 0
    for part in re.split(r"(\\begin\{[^}]*\}|\\end\{[^}]*\}|\\item\b)", body):
        if part == "\\item" and depth == 0:
            items.append([])
            continue
        if part.startswith("\\begin{"):
            depth += 1
        elif part.startswith("\\end{"):
            depth -= 1
        items[-1].append(part)
    texts = ["".join(item) for item in items]
    return texts if texts[0].strip() else texts[1:]


def _parse_blocks(state: StateBlock, text: str) -> int:
    """Parses `text` as Markdown blocks into state.tokens; returns the index of the first."""
    first = len(state.tokens)
    state.env["latex_depth"] = state.env.get("latex_depth", 0) + 1
    try:
        state.md.block.parse(text, state.md, state.env, state.tokens)
    finally:
        state.env["latex_depth"] -= 1
    return first


def _too_deep(state) -> bool:
    """Environments and text commands nest at most MAX_NESTING deep; deeper ones stay text."""
    return state.env.get("latex_depth", 0) >= MAX_NESTING


def _push_list(state: StateBlock, name: str, body: str) -> None:
    ordered = LIST_ENVIRONMENTS[name] == "ordered"
    tag = "ol" if ordered else "ul"
    kind = "ordered_list" if ordered else "bullet_list"
    opener = state.push(f"{kind}_open", tag, 1)
    opener.block = True
    for item in _split_items(body):
        label = ""
        item = item.lstrip()
        if item.startswith("["):
            close = item.find("]")
            if close > 0:
                label, item = item[1:close].strip(), item[close + 1 :]
        text = _dedent(item)
        if label:
            text = f"**{label}** {text}"
        state.push("list_item_open", "li", 1).block = True
        first = _parse_blocks(state, text or "\u00a0")
        added = state.tokens[first:]
        if sum(1 for t in added if t.type == "paragraph_open" and t.level == 0) == 1:
            for token in added:
                if token.type in ("paragraph_open", "paragraph_close") and token.level == 0:
                    token.hidden = True
        state.push("list_item_close", "li", -1).block = True
    state.push(f"{kind}_close", tag, -1).block = True


def _push_text_environment(state: StateBlock, name: str, body: str) -> None:
    text = _dedent(body)
    if name in LABELLED_ENVIRONMENTS:
        label = LABELLED_ENVIRONMENTS[name]
        if text.startswith("["):
            close = text.find("]")
            if close > 0:
                label, text = f"{label} ({text[1:close].strip()})", text[close + 1 :].lstrip()
        marker = "*" if name == "proof" else "**"
        text = f"{marker}{label}.{marker} {text}"
    quoted = name in ("quote", "quotation")
    if quoted:
        state.push("blockquote_open", "blockquote", 1).block = True
    _parse_blocks(state, text)
    if quoted:
        state.push("blockquote_close", "blockquote", -1).block = True


def section_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """`\\section*{Title}` alone on a line: a heading (h3 and below: the page owns h1/h2)."""
    if state.is_code_block(start_line):
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    line = state.src[begin : state.eMarks[start_line]]
    match = SECTION_RE.match(line)
    if not match:
        return False
    if silent:
        return True
    level = {"section": 3, "subsection": 4, "subsubsection": 5, "paragraph": 6}[match.group(1)]
    state.push("heading_open", f"h{level}", 1).block = True
    inline = state.push("inline", "", 0)
    inline.content = match.group(2).strip()
    inline.map = [start_line, start_line + 1]
    inline.children = []
    state.push("heading_close", f"h{level}", -1).block = True
    state.line = start_line + 1
    return True


# --- inline rules ------------------------------------------------------------------------


def bracket_math_inline(state: StateInline, silent: bool) -> bool:
    """`\\(..\\)` inline and `\\[..\\]` displayed inside a paragraph; bare math environments."""
    src, pos = state.src, state.pos
    if src[pos] != "\\" or pos + 1 >= state.posMax:
        return False
    opener = src[pos + 1]
    if opener in "([":
        closer = ")" if opener == "(" else "]"
        close = closing_after(state, pos + 2, state.posMax, closer)
        if close < 0 or not src[pos + 2 : close].strip():
            if not silent:
                state.pending += src[pos : pos + 2]
            state.pos = pos + 2
            return True
        if not silent:
            token = state.push("math_inline" if opener == "(" else "math_inline_double", "math", 0)
            token.content = src[pos + 2 : close].strip()
            token.markup = "\\" + opener
        state.pos = close + 2
        return True
    match = BEGIN_RE.match(src, pos)
    if match and is_math_environment(match.group(1)):
        name = match.group(1)
        body_end, env_end = find_environment_end(src, match.end(), state.posMax, name)
        if body_end < 0:
            return False
        if not silent:
            token = state.push("math_inline_double", "math", 0)
            token.content = display_tex(name, src[match.end() : body_end])
            token.markup = name
        state.pos = env_end
        return True
    return False


def latex_text_command(state: StateInline, silent: bool) -> bool:
    """LaTeX text-mode commands outside math: emphasis, symbols, line breaks, spacing."""
    src, pos = state.src, state.pos
    if src[pos] != "\\" or pos + 1 >= state.posMax:
        return False
    if src[pos + 1] == "\\":
        if _doubled_bracket_math(state, silent):
            return True
        if not silent:
            state.push("hardbreak", "br", 0)
        state.pos = pos + 2
        while state.pos < state.posMax and src[state.pos] in " \n":
            state.pos += 1
        return True
    match = COMMAND_RE.match(src, pos, state.posMax)
    if not match:
        return False
    name, after = match.group(1), match.end()
    if name in TEXT_WRAPPERS and not _too_deep(state):
        close = braced_end(state, after, state.posMax)
        if close < 0:
            return False
        if not silent:
            _push_wrapped(state, TEXT_WRAPPERS[name], src[after + 1 : close - 1])
        state.pos = close
        return True
    if name == "boxed":
        close = braced_end(state, after, state.posMax)
        if close < 0:
            return False
        if not silent:
            token = state.push("math_inline", "math", 0)
            token.content = src[pos:close]
            token.markup = "\\boxed"
        state.pos = close
        return True
    if name in DROPPED_WITH_ARGUMENT:
        close = braced_end(state, after, state.posMax)
        state.pos = close if close > 0 else after
        return True
    if name in TEXT_SYMBOLS:
        if not silent:
            state.pending += TEXT_SYMBOLS[name]
        state.pos = after
        if after < state.posMax and src[after] == "{" and src[after + 1 : after + 2] == "}":
            state.pos = after + 2
        return True
    return False


def _doubled_bracket_math(state: StateInline, silent: bool) -> bool:
    """`\\\\[..\\\\]` and `\\\\(..\\\\)`: delimiters that a model escaped twice."""
    src, pos = state.src, state.pos
    opener = src[pos + 2 : pos + 3]
    if opener not in ("[", "("):
        return False
    close = closing_after(state, pos + 3, state.posMax, "\\" + ("]" if opener == "[" else ")"))
    if close < 0 or not src[pos + 3 : close].strip():
        return False
    if not silent:
        token = state.push("math_inline" if opener == "(" else "math_inline_double", "math", 0)
        token.content = src[pos + 3 : close].strip()
        token.markup = "\\\\" + opener
    state.pos = close + 3
    return True


def _push_wrapped(state: StateInline, tag: str | None, content: str) -> None:
    if tag == "code":
        token = state.push("code_inline", "code", 0)
        token.content = content
        return
    if tag:
        state.push(f"{tag}_open", tag, 1)
    state.env["latex_depth"] = state.env.get("latex_depth", 0) + 1
    try:
        state.md.inline.parse(content, state.md, state.env, state.tokens)
    finally:
        state.env["latex_depth"] -= 1
    if tag:
        state.push(f"{tag}_close", tag, -1)


def latex_quotes(state: StateInline, silent: bool) -> bool:
    """LaTeX quotes (`` `word' `` and ``` ``words'' ```), which Markdown would read as code."""
    if state.src[state.pos] != "`":
        return False
    match = LATEX_QUOTE_RE.match(state.src, state.pos, state.posMax)
    if not match or len(match.group(1)) != len(match.group(3)):
        return False
    if not silent:
        double = len(match.group(1)) == 2
        state.pending += ("\u201c" if double else "\u2018") + match.group(2)
        state.pending += "\u201d" if double else "\u2019"
    state.pos = match.end()
    return True


MATH_ENV_NAMES = "|".join(
    re.escape(name)
    for name in sorted({*MATH_ENVIRONMENTS, *INNER_MATH_ENVIRONMENTS}, key=len, reverse=True)
)
MATH_BEGIN_RE = re.compile(r"\\begin\{(" + MATH_ENV_NAMES + r")\}")
BLANK_LINES_RE = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
LIST_BEGIN_RE = re.compile(r"(?<=\S)[ \t]*(\\begin\{(?:itemize|enumerate|description)\})")
LIST_END_RE = re.compile(r"(\\end\{(?:itemize|enumerate|description)\})[ \t]*(?=\S)")


def _close_up_math_environments(text: str) -> str:
    parts: list[str] = []
    done = 0
    unclosed: dict[str, int] = {}
    for match in MATH_BEGIN_RE.finditer(text):
        name = match.group(1)
        if match.start() < done or match.end() >= unclosed.get(name, len(text) + 1):
            continue
        end_tag = "\\end{" + name + "}"
        end = text.find(end_tag, match.end())
        if end < 0:
            unclosed[name] = match.end()
            continue
        end += len(end_tag)
        parts += [text[done : match.start()], BLANK_LINES_RE.sub("\n", text[match.start() : end])]
        done = end
    parts.append(text[done:])
    return "".join(parts)


def normalise_source(text: str) -> str:
    """Source fixes before parsing: blank lines inside a math environment (an error in LaTeX,
    common in the corpora) would split it into paragraphs, and a list environment written in
    the middle of a line must start its own block."""
    text = _close_up_math_environments(text)
    text = LIST_BEGIN_RE.sub(r"\n\n\1", text)
    return LIST_END_RE.sub(r"\1\n\n", text)


def latex_plugin(md: MarkdownIt) -> None:
    interrupts = {"alt": ["paragraph", "reference", "blockquote", "list"]}
    md.block.ruler.before("fence", "latex_bracket_math", bracket_math_block, interrupts)
    md.block.ruler.before("fence", "latex_environment", environment_block, interrupts)
    md.block.ruler.before("fence", "latex_section", section_block, interrupts)
    md.inline.ruler.before("escape", "latex_bracket_math", bracket_math_inline)
    md.inline.ruler.before("escape", "latex_text_command", latex_text_command)
    md.inline.ruler.before("backticks", "latex_quotes", latex_quotes)
