"""The import report and the corpus rows' shared constants and hashing."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from problems.importers import (
    Issue,
)

BATCH_SIZE = 2000
MAX_ISSUES = 1000
MODELS = ("problems", "reference_solutions", "proofs", "analyses")
PROBLEM_FIELDS = ("statement", "contest", "year", "number", "topic", "final_answer")
SOURCED_LISTS = ("imported_schemes", "imported_ratings", "alternative_statements")


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class ImportReport:
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {
            name: {"created": 0, "updated": 0, "unchanged": 0} for name in MODELS
        }
    )
    issues: list[dict] = field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    records: int = 0
    dry_run: bool = False
    committed: bool = False
    problem_ids: list[int] = field(default_factory=list)
    formats: list[dict] = field(default_factory=list)  # each source and the format it was read as
    after_commit: list[str] = field(default_factory=list)  # what other apps made of the import
    pictures: int = 0  # pictures stored that were not stored before

    @property
    def ok(self) -> bool:
        return self.errors == 0

    @property
    def imported(self) -> int:
        """Rows the import wrote or found unchanged, of every model."""
        return sum(sum(count.values()) for count in self.counts.values())

    @property
    def failed(self) -> bool:
        """Nothing of the source was imported: the database refused the import (all rolled
        back), or errors and not one good record."""
        return (not self.committed and not self.dry_run) or bool(self.errors and not self.imported)

    def outcome(self) -> str:
        """The import's outcome in words (the report's last line, the job's message)."""
        if self.dry_run and self.errors:
            return (
                f"Dry run: nothing was written. {self.errors} error(s): the records they name "
                "would be left out."
            )
        if self.dry_run:
            return "Dry run: nothing was written."
        if not self.errors:
            return ""
        if self.failed:
            return f"{self.errors} error(s): nothing was written."
        return (
            f"{self.errors} error(s): the records they name were not imported; every other "
            "record was."
        )

    def add(self, issue: Issue) -> None:
        if issue.level == "error":
            self.errors += 1
        else:
            self.warnings += 1
        if len(self.issues) < MAX_ISSUES:
            self.issues.append(issue.to_dict())

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "committed": self.committed,
            "records": self.records,
            "counts": self.counts,
            "errors": self.errors,
            "warnings": self.warnings,
            "issues": self.issues,
            "issues_truncated": self.errors + self.warnings > len(self.issues),
            "formats": self.formats,
            "after_commit": self.after_commit,
            "pictures": self.pictures,
        }

    def lines(self) -> list[str]:
        """The report in words, one line each (what the command prints)."""
        out = [f"{f['source']}: read as {f['format']}" for f in self.formats]
        for issue in self.issues:
            where = issue["file"] + (f":{issue['line']}" if issue["line"] is not None else "")
            field_part = f" field {issue['field']!r}:" if issue["field"] else ""
            out.append(f"{issue['level']}: {where}:{field_part} {issue['message']}")
        if self.errors + self.warnings > len(self.issues):
            out.append(f"... and {self.errors + self.warnings - len(self.issues)} more")
        for name in MODELS:
            count = self.counts[name]
            out.append(
                f"{name}: {count['created']} created, {count['updated']} updated, "
                f"{count['unchanged']} unchanged"
            )
        if self.pictures:
            out.append(f"pictures: {self.pictures} stored")
        if outcome := self.outcome():
            out.append(outcome)
        return out + self.after_commit
