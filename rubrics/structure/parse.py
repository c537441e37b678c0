"""One entry point for every scheme format the platform reads."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from .model import Scheme
from .parse_imobench import parse_imobench
from .parse_matharena import parse_matharena
from .parse_proofbench import parse_proofbench
from .parse_refgrader import parse_refgrader
from .validate import Message, error, has_errors

FORMATS = (
    "proofbench_markdown",
    "matharena_json",
    "imobench_guidelines",
    "refgrader_plain",
    "refgrader_approachability",
    "refgrader_milestones",
    "refgrader_hybrid",
)


@dataclass
class ParseResult:
    """scheme (None when nothing could be read), messages (parse problems then validation),
    guidelines (the source text to keep as free guidance when there is no scheme).
    Unpacks as `scheme, messages = parse_scheme(...)`."""

    scheme: Scheme | None
    messages: list[Message] = field(default_factory=list)
    guidelines: str = ""

    def __iter__(self) -> Iterator:
        return iter((self.scheme, self.messages))

    @property
    def is_valid(self) -> bool:
        """A scheme was read and has no errors (warnings allowed)."""
        return self.scheme is not None and not has_errors(self.messages)


def parse_scheme(content: object, fmt: str, *, problem_id: str | None = None) -> ParseResult:
    """content: the text (or, for matharena_json, the JSON value) as found in the source;
    fmt: one of FORMATS ("markdown" is accepted for proofbench_markdown)."""
    if fmt == "markdown":
        fmt = "proofbench_markdown"
    if fmt not in FORMATS:
        return ParseResult(
            None, [error(f"Unknown scheme format {fmt!r}: use {', '.join(FORMATS)}.")]
        )
    if fmt == "matharena_json":
        return ParseResult(*parse_matharena(content, problem_id))
    if not isinstance(content, str):
        return ParseResult(None, [error(f"A {fmt} scheme must be text.")])
    if fmt == "proofbench_markdown":
        scheme, messages = parse_proofbench(content)
    elif fmt == "imobench_guidelines":
        scheme, messages = parse_imobench(content)
    else:
        scheme, messages = parse_refgrader(content, fmt.removeprefix("refgrader_"))
    if scheme is None and not has_errors(messages):
        # warnings never keep a version from approval; a version with nothing to grade by
        # is kept from it by an error that says so
        messages = [*messages, error("Nothing in this text could be read as a marking scheme.")]
    return ParseResult(scheme, messages, "" if scheme is not None else content.strip())
