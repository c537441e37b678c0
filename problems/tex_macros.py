"""A text's own macros: `\\newcommand`, `\\renewcommand`, `\\providecommand`, `\\def`, `\\gdef`
and `\\DeclareMathOperator` written in a proof, a statement or a solution.

The server only finds where each definition is and writes it in the one form KaTeX accepts
whatever the name (`\\def\\name#1#2{body}`: KaTeX's `\\newcommand` refuses a name it already
knows, such as `\\R`, and has no optional argument); KaTeX itself reads the definitions in the
browser (static/js/math.js), into a table of macros of that text alone, so that no macro reaches
another text on the page, and its own limit on expansions (`maxExpand`) stops a macro that
expands without end. Outside math a definition renders as a hidden `<span class="math define">`
(never as raw text); inside math it is rewritten in place (`definitions_normalised`).
A definition longer than MAX_DEFINITION_CHARS is not read (it stays text), and a text's
definitions beyond MAX_DEFINITIONS are dropped.
"""

import re
from dataclasses import dataclass

DEFINING_RE = re.compile(
    r"\\(newcommand|renewcommand|providecommand|DeclareMathOperator|def|gdef)(?![A-Za-z@])(\*?)"
)
NAME_RE = re.compile(r"\\(?:[A-Za-z@]+|[^A-Za-z@\s])")
PARAMETERS_RE = re.compile(r"(?:#[1-9]|[^{}#\\\s]|\\[A-Za-z@]+){0,20}")
MAX_DEFINITION_CHARS = 2000
MAX_DEFINITIONS = 100


@dataclass(frozen=True)
class Definition:
    """One definition found at a position of a text: where it ends, and the TeX KaTeX gets."""

    end: int
    tex: str


def _skip_space(src: str, pos: int, end: int) -> int:
    while pos < end and src[pos] in " \t\n":
        pos += 1
    return pos


def _braced(src: str, pos: int, end: int) -> int:
    """Given src[pos] == "{", the index just past its matching brace before end, or -1."""
    depth = 0
    index = pos
    while index < end:
        char = src[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return -1


def _name(src: str, pos: int, end: int) -> tuple[str, int] | None:
    """`\\name` or `{\\name}` at pos: the name and the index past it."""
    if src.startswith("{", pos):
        inner = _skip_space(src, pos + 1, end)
        match = NAME_RE.match(src, inner, end)
        if not match:
            return None
        close = _skip_space(src, match.end(), end)
        if not src.startswith("}", close):
            return None
        return match.group(0), close + 1
    match = NAME_RE.match(src, pos, end)
    return (match.group(0), match.end()) if match else None


def _bracketed(src: str, pos: int, end: int) -> tuple[str, int] | None:
    """`[..]` at pos (braces inside balanced): its contents and the index past it."""
    if not src.startswith("[", pos):
        return None
    depth = 0
    for index in range(pos + 1, end):
        char = src[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "]" and depth == 0:
            return src[pos + 1 : index], index + 1
    return None


def _body(src: str, pos: int, end: int) -> tuple[str, int] | None:
    if not src.startswith("{", pos):
        return None
    close = _braced(src, pos, end)
    return (src[pos + 1 : close - 1], close) if close > 0 else None


def _command(src: str, pos: int, end: int) -> Definition | None:
    """The rest of `\\newcommand{\\name}[n][default]{body}`, from pos."""
    found = _name(src, _skip_space(src, pos, end), end)
    if not found:
        return None
    name, pos = found
    count, default = 0, None
    pos = _skip_space(src, pos, end)
    bracket = _bracketed(src, pos, end)
    if bracket:
        if not bracket[0].strip().isdigit():
            return None
        count, pos = int(bracket[0]), bracket[1]
        pos = _skip_space(src, pos, end)
        bracket = _bracketed(src, pos, end)
        if bracket:
            default, pos = bracket[0], bracket[1]
            pos = _skip_space(src, pos, end)
    if count > 9 or (default is not None and count < 1):
        return None
    body = _body(src, pos, end)
    if not body:
        return None
    text, pos = body
    if default is not None:
        # KaTeX has no optional argument: the default always applies, the others move down.
        text = re.sub(
            r"#([1-9])",
            lambda m: "{" + default + "}" if m.group(1) == "1" else f"#{int(m.group(1)) - 1}",
            text,
        )
        count -= 1
    parameters = "".join(f"#{n}" for n in range(1, count + 1))
    return Definition(end=pos, tex=f"\\def{name}{parameters}{{{text}}}")


def _operator(src: str, pos: int, end: int, starred: bool) -> Definition | None:
    found = _name(src, _skip_space(src, pos, end), end)
    if not found:
        return None
    name, pos = found
    body = _body(src, _skip_space(src, pos, end), end)
    if not body:
        return None
    operator = "\\operatorname*" if starred else "\\operatorname"
    return Definition(end=body[1], tex=f"\\def{name}{{{operator}{{{body[0]}}}}}")


def _def(src: str, pos: int, end: int) -> Definition | None:
    match = NAME_RE.match(src, _skip_space(src, pos, end), end)
    if not match:
        return None
    parameters = PARAMETERS_RE.match(src, match.end(), end)
    body = _body(src, parameters.end(), end)
    if not body:
        return None
    return Definition(end=body[1], tex=f"\\def{match.group(0)}{parameters.group(0)}{{{body[0]}}}")


def definition_at(src: str, pos: int, end: int | None = None) -> Definition | None:
    """The definition starting at src[pos] (a backslash), or None when there is none or it
    cannot be read within MAX_DEFINITION_CHARS."""
    match = DEFINING_RE.match(src, pos, end if end is not None else len(src))
    if not match:
        return None
    end = min(len(src) if end is None else end, pos + MAX_DEFINITION_CHARS)
    command, starred = match.group(1), bool(match.group(2))
    if command == "DeclareMathOperator":
        return _operator(src, match.end(), end, starred)
    if command in ("def", "gdef"):
        return None if starred else _def(src, match.end(), end)
    return _command(src, match.end(), end)


def has_definitions(text: str) -> bool:
    return DEFINING_RE.search(text) is not None


def _definitions(text: str) -> list[tuple[int, Definition]]:
    found: list[tuple[int, Definition]] = []
    done = 0
    for match in DEFINING_RE.finditer(text):
        if match.start() < done:
            continue
        definition = definition_at(text, match.start())
        if definition:
            found.append((match.start(), definition))
            done = definition.end
    return found


def definitions_normalised(tex: str) -> str:
    """TeX with each definition in it written as KaTeX accepts it (math that defines macros)."""
    if not has_definitions(tex):
        return tex
    parts: list[str] = []
    done = 0
    for count, (start, definition) in enumerate(_definitions(tex)):
        parts += [tex[done:start], definition.tex if count < MAX_DEFINITIONS else ""]
        done = definition.end
    parts.append(tex[done:])
    return "".join(parts)


def definitions_split(text: str) -> tuple[list[str], str]:
    """The definitions of a text (as KaTeX gets them) and the text without them."""
    if not has_definitions(text):
        return [], text
    tex: list[str] = []
    parts: list[str] = []
    done = 0
    for start, definition in _definitions(text):
        parts.append(text[done:start])
        if len(tex) < MAX_DEFINITIONS:
            tex.append(definition.tex)
        done = definition.end
    parts.append(text[done:])
    return tex, "".join(parts)


# --- markdown-it ---------------------------------------------------------------------------


def tex_definition(state, silent: bool) -> bool:
    """A definition in running text: a `tex_definition` token (hidden; KaTeX reads it)."""
    src, pos = state.src, state.pos
    if src[pos] != "\\":
        return False
    definition = definition_at(src, pos, state.posMax)
    if not definition:
        return False
    if not silent:
        count = state.env.get("tex_definitions", 0)
        state.env["tex_definitions"] = count + 1
        if count < MAX_DEFINITIONS:
            state.push("tex_definition", "span", 0).content = definition.tex
    state.pos = definition.end
    return True


_BLANK_CHILDREN = {"tex_definition", "softbreak", "hardbreak"}


def definition_paragraphs(state) -> None:
    """A paragraph of definitions only draws no paragraph (it would be an empty gap)."""
    tokens = state.tokens
    for index in range(1, len(tokens) - 1):
        inline = tokens[index]
        if inline.type != "inline" or tokens[index - 1].type != "paragraph_open":
            continue
        children = inline.children or []
        if any(c.type == "tex_definition" for c in children) and all(
            c.type in _BLANK_CHILDREN or (c.type == "text" and not c.content.strip())
            for c in children
        ):
            tokens[index - 1].hidden = True
            tokens[index + 1].hidden = True


def tex_macros_plugin(md) -> None:
    md.inline.ruler.before("escape", "tex_definition", tex_definition)
    md.core.ruler.push("tex_definition_paragraphs", definition_paragraphs)
