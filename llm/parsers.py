"""Reading what models write: marking-scheme sections, JSON, `<score>` and `<points>` XML,
main-step analyses (boxed verdicts: `llm.scores`). Lenient toward real output (`<think>`
reasoning, code fences around the answer, a sentence before or after it); strict about the
contract itself: a reply that does not hold what was asked raises `OutputError` saying what is
missing.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from llm.scores import strip_think
from llm.whole import not_whole

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.S)
OPEN_THINK = re.compile(r"<think\s*>", re.I)
TRAILING_COMMA = re.compile(r",(\s*[}\]])")
SECTION = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*)?[ \t]*(?:\d+[.)][ \t]*)?(?:\*\*)?[ \t]*"
    r"(checkpoints|zero[- ]credit(?: items)?|deductions|notes)\b",
    re.I | re.M,
)
MAIN_STEP = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*)?[ \t]*(?:main step|key strategic insight|step)[ \t]*(\d+)"
    r"[ \t]*[:.)-]?[ \t]*(.*?)(?:\*\*)?[ \t]*$",
    re.I | re.M,
)
APPROACHABILITY = re.compile(
    r"approachability(?:\s+score)?(?:\s*\(1-5\))?\s*[:=]?\s*\**\s*(\d)", re.I
)


class OutputError(ValueError):
    """The reply does not hold what the prompt asked for."""


def visible(text: str) -> str:
    """The answer part of a reply: after any `</think>`; an unclosed `<think>` (the reply was
    cut off while reasoning) leaves nothing."""
    body = strip_think(text or "")
    if body is text and OPEN_THINK.search(body or ""):
        return body[: OPEN_THINK.search(body).start()].strip()
    return body.strip()


def unfence(text: str, languages: tuple[str, ...] = ("", "markdown", "md")) -> str:
    """The reply without a code fence wrapped around the whole answer."""
    body = visible(text)
    fences = list(FENCE.finditer(body))
    if len(fences) == 1 and fences[0].group(1).lower() in languages:
        outside = (body[: fences[0].start()] + body[fences[0].end() :]).strip()
        if len(outside) < len(fences[0].group(2)):
            return fences[0].group(2).strip()
    return body


# --- Marking schemes -------------------------------------------------------------------


@dataclass
class SchemeSections:
    checkpoints: str
    zero_credit: str = ""
    deductions: str = ""
    notes: str = ""
    preamble: str = ""
    text: str = field(default="", repr=False)


def scheme_sections(text: str) -> SchemeSections:
    """Splits a ProofBench-style scheme into its sections. `text` is the scheme from its
    checkpoints heading on (a sentence before it, reasoning and fences dropped), which is what
    `rubrics.structure.parse_proofbench` reads."""
    body = unfence(text)
    headings = list(SECTION.finditer(body))
    first = next((m for m in headings if m.group(1).lower() == "checkpoints"), None)
    if first is None:
        raise OutputError("The reply has no 'Checkpoints' section.")
    parts: dict[str, str] = {}
    kept = [m for m in headings if m.start() >= first.start()]
    for index, match in enumerate(kept):
        end = kept[index + 1].start() if index + 1 < len(kept) else len(body)
        name = match.group(1).lower().split()[0].split("-")[0]
        parts.setdefault(name, body[match.end() : end].strip(" \t*:\n"))
    if not parts.get("checkpoints", "").strip():
        raise OutputError("The 'Checkpoints' section is empty.")
    return SchemeSections(
        checkpoints=parts["checkpoints"],
        zero_credit=parts.get("zero", ""),
        deductions=parts.get("deductions", ""),
        notes=parts.get("notes", ""),
        preamble=body[: first.start()].strip(),
        text=_from_line_start(body, first.start()).strip() + "\n",
    )


def _from_line_start(body: str, index: int) -> str:
    return body[body.rfind("\n", 0, index) + 1 :]


# --- JSON -----------------------------------------------------------------------------


def parse_json(text: str, expect: type | None = None) -> object:
    """The JSON value in a reply: a ```json fence, else the first balanced array or object.
    Trailing commas are forgiven. `expect` (list or dict) is checked."""
    body = visible(text)
    candidates = [m.group(2) for m in FENCE.finditer(body) if m.group(1).lower() in ("", "json")]
    candidates += _balanced(body)
    last_error = "no JSON array or object in the reply"
    for candidate in candidates:
        for attempt in (candidate, TRAILING_COMMA.sub(r"\1", candidate)):
            try:
                value = json.loads(attempt)
            except json.JSONDecodeError as exc:
                last_error = f"invalid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
                continue
            if expect is not None and not isinstance(value, expect):
                last_error = f"expected a JSON {expect.__name__}, got {type(value).__name__}"
                continue
            return value
    raise OutputError(f"Could not read JSON: {last_error}.")


def _balanced(body: str) -> list[str]:
    """Each top-level bracketed span starting at the first '[' or '{' (strings respected)."""
    found = []
    for start, char in enumerate(body):
        if char not in "[{":
            continue
        stack, in_string, escape = [], False, False
        for index in range(start, len(body)):
            c = body[index]
            if in_string:
                if escape:
                    escape = False
                elif c == "\\":
                    escape = True
                elif c == '"':
                    in_string = False
                continue
            if c == '"':
                in_string = True
            elif c in "[{":
                stack.append("]" if c == "[" else "}")
            elif c in "]}":
                if not stack or stack.pop() != c:
                    break
                if not stack:
                    found.append(body[start : index + 1])
                    break
        if found:
            return found
    return found


# --- Scores ---------------------------------------------------------------------------


@dataclass
class XmlScore:
    score: int
    fields: dict[str, str]


def xml_tag(text: str, tag: str) -> str | None:
    """The content of the last complete `<tag>...</tag>` after any reasoning."""
    matches = re.findall(rf"<{tag}\s*>(.*?)</{tag}\s*>", visible(text), re.S | re.I)
    return matches[-1].strip() if matches else None


def opens_tag(text: str, tag: str) -> bool:
    """The answer (after any reasoning) opens `<tag>`, closed or not."""
    return re.search(rf"<{tag}\s*>", visible(text), re.I) is not None


def unclosed_tag(text: str, tags: tuple[str, ...]) -> str | None:
    """The first of `tags` that the answer opens more often than it closes (the reply was cut
    inside it), else None."""
    body = visible(text)
    for tag in tags:
        opened = len(re.findall(rf"<{tag}\s*>", body, re.I))
        if opened > len(re.findall(rf"</{tag}\s*>", body, re.I)):
            return tag
    return None


def _require_whole(text: str) -> None:
    if problem := not_whole(text):
        raise OutputError(f"The reply is not whole: {problem}.")


def score_tag(text: str, tag: str) -> str:
    """The content of the reply's one `<tag>...</tag>`: the rule of every tagged score contract
    (ProofBench's `<score>`, IMO-Bench's `<points>`). The reply must be whole (`llm.whole`: its
    reasoning block closed, within the size limit) and its answer must hold the tag exactly
    once, closed; anything else raises OutputError, whatever the tag held."""
    _require_whole(text)
    body = visible(text)
    opened = list(re.finditer(rf"<{tag}\s*>", body, re.I))
    closed = list(re.finditer(rf"</{tag}\s*>", body, re.I))
    if not opened:
        raise OutputError(f"The reply has no <{tag}>...</{tag}>.")
    if len(closed) < len(opened) or closed[-1].start() < opened[-1].end():
        raise OutputError(f"The reply's <{tag}> is never closed (no </{tag}>): it was cut off.")
    if len(opened) > 1:
        raise OutputError(f"The reply gives {len(opened)} <{tag}> tags: a reply gives one.")
    return body[opened[0].end() : closed[0].start()].strip()


def score_xml(
    text: str, tags: tuple[str, ...] = ("score", "assessment", "errors"), max_score: int = 7
) -> XmlScore:
    """A grader's `<score>N</score>` reply (ProofBench's evaluator contract, A.8: N an integer
    from 0 to `max_score`) with its other tags. A tag of the contract opened and never closed
    means the reply was cut: no score, whatever came before."""
    _require_whole(text)
    if (cut := unclosed_tag(text, tags)) is not None:
        raise OutputError(f"The reply's <{cut}> is never closed (no </{cut}>): it was cut off.")
    raw = score_tag(text, "score")
    if not re.fullmatch(r"\d+", raw) or not 0 <= int(raw) <= max_score:
        raise OutputError(f"The score {raw!r} is not an integer from 0 to {max_score}.")
    fields = {tag: value for tag in tags if (value := xml_tag(text, tag)) is not None}
    return XmlScore(int(raw), fields)


POINTS_OUT_OF_7 = re.compile(r"<points>(.*?)</points>", re.S | re.I)


def points_out_of_7(text: str) -> Decimal:
    """IMO-Bench's ProofAutoGrader reply: its one `<points>N out of 7</points>` block, with N a
    whole number from 0 to 7 (`score_tag`'s rule)."""
    raw = score_tag(text, "points")
    inner = re.fullmatch(r"(\d+)\s*out\s+of\s+7", raw, re.I)
    if inner is None or int(inner.group(1)) > 7:
        raise OutputError(f"The points {raw!r} are not 'N out of 7' with N from 0 to 7.")
    return Decimal(inner.group(1))


# --- RefGrader ------------------------------------------------------------------------


@dataclass
class MainStep:
    number: int
    title: str
    body: str
    approachability: int | None = None


def main_steps(text: str, *, approachability: bool = False) -> list[MainStep]:
    """The main steps of an analysis ("### Main step 1: title" and what follows). With
    `approachability`, each main step must carry a rating from 1 to 5."""
    body = unfence(text)
    heads = list(MAIN_STEP.finditer(body))
    if not heads:
        raise OutputError("The analysis names no main step ('Main step 1: ...').")
    steps = []
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(body)
        content = body[head.end() : end].strip()
        rating = APPROACHABILITY.search(content)
        value = int(rating.group(1)) if rating else None
        if approachability and (value is None or not 1 <= value <= 5):
            raise OutputError(
                f"Main step {head.group(1)} has no approachability rating from 1 to 5."
            )
        steps.append(MainStep(int(head.group(1)), head.group(2).strip(" *:"), content, value))
    return steps


@dataclass
class Cluster:
    label: str
    main_steps: list[str]
    members: list[int]
    representative: int


def clusters(text: str, solutions: Sequence[str]) -> list[Cluster]:
    """The clusters of the reference solutions `solutions` (numbered from 1 in the reply).

    Our prompt's shape lists `members` and a `representative` number; the RefGrader paper's own
    shape (`class_id`, `main_steps`, `representative_solution` as full text, no members) is read
    too: its representative is the solution whose text it reproduces. A solution counts in its
    first cluster only, a representative is one of its cluster's members (else the first)."""
    value = parse_json(text, list)
    found: list[Cluster] = []
    seen: set[int] = set()
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise OutputError(f"Cluster {index + 1} is not a JSON object.")
        members = [m for m in _ints(entry.get("members")) if 1 <= m <= len(solutions)]
        representative = _ints([entry.get("representative")])
        rep = representative[0] if representative else None
        quoted = entry.get("representative_solution")
        if rep is None and isinstance(quoted, str) and quoted.strip():
            rep = _quoted_solution(quoted, solutions)
            if rep is not None and not members:
                members = [rep]
        members = [m for m in members if m not in seen]
        if rep is None or rep not in members:
            rep = members[0] if members else None
        if rep is None:
            continue
        seen.update(members)
        steps = entry.get("main_steps") or []
        found.append(
            Cluster(
                label=str(entry.get("cluster") or entry.get("class_id") or f"C{len(found) + 1}"),
                main_steps=[str(step) for step in steps if str(step).strip()],
                members=members,
                representative=rep,
            )
        )
    if not found:
        raise OutputError("No cluster names a solution of the list.")
    return found


QUOTE_LIKENESS = 0.6


def _quoted_solution(quoted: str, solutions: Sequence[str]) -> int | None:
    """The number of the solution a reply reproduces: the same words, else the solution whose
    words are most alike when they are alike enough (a model copies long texts with slips)."""
    wanted = quoted.split()
    texts = [s.split() for s in solutions]
    for number, candidate in enumerate(texts, start=1):
        if candidate == wanted:
            return number
    scored = [
        (difflib.SequenceMatcher(None, wanted, candidate, autojunk=False).ratio(), number)
        for number, candidate in enumerate(texts, start=1)
    ]
    best, number = max(scored, default=(0.0, None))
    return number if best >= QUOTE_LIKENESS else None


@dataclass(frozen=True)
class ClusterMatch:
    label: str
    justification: str


def closest_cluster(text: str, labels: Sequence[str]) -> ClusterMatch:
    """RefGrader's matching reply `{"closest_rep_id": "C2", "justification": "..."}`: the
    cluster must be one of `labels`."""
    value = parse_json(text, dict)
    label = str(value.get("closest_rep_id") or value.get("cluster") or "").strip()
    if not label:
        raise OutputError('The reply names no cluster (expected "closest_rep_id").')
    if label not in labels:
        raise OutputError(
            f"The reply names cluster {label!r}, which is not one of {', '.join(labels)}."
        )
    return ClusterMatch(label, str(value.get("justification") or "").strip())


def _ints(values: object) -> list[int]:
    out = []
    for value in values if isinstance(values, list) else []:
        try:
            out.append(int(str(value).strip().lstrip("#")))
        except ValueError:
            continue
    return out
