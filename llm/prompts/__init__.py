"""Versioned prompt templates with named fields.

A template is a file `templates/<name>@<version>.md`: the system message, a line `<<<USER>>>`,
then the user message. Fields are written `{{field}}` (double braces, so LaTeX braces in the
wording stay as they are); `render` refuses a missing or an unknown field. A template never
changes once used: a new wording is a new version, so a stored scheme's `prompt` key always
names the exact text that produced it.

The wording is ours; each template keeps its method's output contract (ProofBench's three
sections, RefGrader's cluster JSON, main-step analysis and 7-point rubric).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"
SEPARATOR = "<<<USER>>>"
FIELD = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


class PromptError(ValueError):
    pass


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    system: str
    user: str

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(FIELD.findall(self.system) + FIELD.findall(self.user))

    def render(self, **values: str) -> list[dict[str, str]]:
        """The chat messages with every field filled in."""
        missing = self.fields - values.keys()
        unknown = values.keys() - self.fields
        if missing or unknown:
            problems = []
            if missing:
                problems.append(f"missing field(s) {', '.join(sorted(missing))}")
            if unknown:
                problems.append(f"unknown field(s) {', '.join(sorted(unknown))}")
            raise PromptError(f"Prompt {self.key}: {'; '.join(problems)}.")

        def fill(text: str) -> str:
            return FIELD.sub(lambda m: str(values[m.group(1)]), text)

        messages = []
        if self.system.strip():
            messages.append({"role": "system", "content": fill(self.system).strip()})
        messages.append({"role": "user", "content": fill(self.user).strip()})
        return messages


def split_key(key: str) -> tuple[str, str]:
    name, sep, version = key.partition("@")
    if not sep or not name or not version:
        raise PromptError(
            f"A prompt key is written name@version (e.g. proofbench_scheme@v1): {key!r}"
        )
    return name, version


@cache
def get(key: str) -> Prompt:
    name, version = split_key(key)
    path = TEMPLATES / f"{name}@{version}.md"
    if not path.is_file():
        raise PromptError(f"No prompt template {key} (looked for {path.name} in {TEMPLATES}).")
    text = path.read_text(encoding="utf-8")
    system, sep, user = text.partition(SEPARATOR)
    if not sep:
        raise PromptError(f"{path.name}: no {SEPARATOR} line between system and user message.")
    return Prompt(name=name, version=version, system=system.strip(), user=user.strip())


def available() -> list[str]:
    """Every template key, sorted."""
    return sorted(path.stem for path in TEMPLATES.glob("*@*.md"))


def versions(name: str) -> list[str]:
    return [split_key(key)[1] for key in available() if split_key(key)[0] == name]


def render(key: str, **values: str) -> list[dict[str, str]]:
    return get(key).render(**values)
