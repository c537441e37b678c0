"""Writes on marking schemes: versions, edits, approval, ratings and imports."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from core.roles import Role, has_role
from problems.models import Problem
from problems.selectors import problems_with_imported_schemes

from .models import MarkingScheme, SchemeMethod, SchemeRating, SchemeStatus
from .signals import scheme_approved
from .structure import Level, parse_scheme, scheme_to_markdown


@transaction.atomic
def scheme_version_create(
    *,
    problem: Problem,
    text: str,
    method: str,
    fmt: str = "proofbench_markdown",
    content: object | None = None,
    guidelines: str = "",
    provenance: dict | None = None,
    created_by: User | None = None,
    previous: MarkingScheme | None = None,
    version: int | None = None,
) -> MarkingScheme:
    """A new draft version of the problem's scheme: `content` (or `text`) parsed as `fmt`,
    the structure and validation messages stored beside the text. Text that does not parse
    is still saved, with its problems in words and is_valid False; text the parser keeps as
    free guidance (IMO-ProofBench guidelines) lands in `guidelines`. The version number is
    `version` when that number is free (an import keeping an export's numbers), else the next."""
    Problem.objects.select_for_update().only("id").get(pk=problem.pk)
    result = parse_scheme(
        content if content is not None else text, fmt, problem_id=problem.external_id
    )
    taken = MarkingScheme.objects.filter(problem=problem)
    if version is None or version < 1 or taken.filter(version=version).exists():
        version = (taken.aggregate(last=Max("version"))["last"] or 0) + 1
    kept_guidelines = "\n\n".join(part for part in (guidelines, result.guidelines) if part)
    return MarkingScheme.objects.create(
        problem=problem,
        version=version,
        method=method,
        status=SchemeStatus.DRAFT,
        text=text,
        guidelines=kept_guidelines,
        structure=result.scheme.to_dict() if result.scheme is not None else {},
        validation=[message.to_dict() for message in result.messages],
        is_valid=result.is_valid,
        previous=previous,
        provenance={"format": fmt, **(provenance or {})},
        created_by=created_by,
    )


TEXT_FORMATS = (
    ("proofbench_markdown", "ProofBench Markdown (Checkpoints, Zero-credit items, Deductions)"),
    ("imobench_guidelines", "IMO-ProofBench guidelines ((Partial) / (Almost))"),
    ("refgrader_plain", "RefGrader rubric: plain"),
    ("refgrader_approachability", "RefGrader rubric: approachability"),
    ("refgrader_milestones", "RefGrader rubric: milestones"),
    ("refgrader_hybrid", "RefGrader rubric: hybrid"),
)


def scheme_text_format(scheme: MarkingScheme) -> str:
    """The format the version's text is written in (`text_format_of` its recorded format)."""
    return text_format_of((scheme.provenance or {}).get("format"))


def text_format_of(recorded: str | None) -> str:
    """The text format of a version whose provenance records `recorded`: that one when it is
    a text format, else ProofBench Markdown (MathArena's JSON is kept as ProofBench Markdown
    text)."""
    return recorded if recorded in dict(TEXT_FORMATS) else "proofbench_markdown"


@transaction.atomic
def scheme_edit(
    *, scheme: MarkingScheme, text: str, user: User, fmt: str | None = None
) -> MarkingScheme:
    """An admin's edit of `scheme`: a new draft version (next number) whose `previous` is the
    edited version, parsed as `fmt` (default: the edited version's text format). The edited
    version is never changed (this is also why frozen versions stay as they are); the diff is
    derived from the two texts (`rubrics.selectors.scheme_diff`)."""
    fmt = fmt or scheme_text_format(scheme)
    if fmt not in dict(TEXT_FORMATS):
        raise ValidationError({"fmt": f"Unknown scheme format {fmt!r}."})
    text = text.replace("\r\n", "\n")
    if not text.strip():
        raise ValidationError({"text": "The scheme is empty: write at least one checkpoint."})
    if text == scheme.text and fmt == scheme_text_format(scheme):
        raise ValidationError(
            {"text": f"Nothing changed: the text is the same as version {scheme.version}."}
        )
    return scheme_version_create(
        problem=scheme.problem,
        text=text,
        method=SchemeMethod.MANUAL,
        fmt=fmt,
        guidelines=scheme.guidelines,
        provenance={"edited_from": scheme.version, "edited_from_method": scheme.method},
        created_by=user,
        previous=scheme,
    )


@transaction.atomic
def scheme_approve(*, scheme: MarkingScheme, user: User) -> MarkingScheme:
    """Makes `scheme` the problem's approved version (the one new grading items pin).

    Status flow: every version starts as a draft; an admin approves a valid draft; approving
    another version of the same problem returns the previously approved one to draft (at most
    one approved per problem, also a database constraint); `scheme_freeze` turns the approved
    version into frozen once grades point at it, and a frozen version never changes status
    again. Refused, with the reason in words, for an invalid or frozen version (warnings never
    refuse: only errors make a version invalid).

    The items waiting for the version move to it (`rubrics.signals.scheme_approved`: annotation
    re-pins the items of open campaigns that have no submitted grade); the returned version's
    `repinned_items` says how many moved."""
    Problem.objects.select_for_update().only("id").get(pk=scheme.problem_id)
    scheme = MarkingScheme.objects.select_for_update().get(pk=scheme.pk)
    if scheme.status == SchemeStatus.FROZEN:
        raise ValidationError(
            f"Version {scheme.version} is frozen: grades point at it, so its status stays."
        )
    if not scheme.is_valid:
        raise ValidationError(
            f"Version {scheme.version} cannot be approved while it has problems: "
            + " ".join(m["text"] for m in scheme.validation if m.get("level") == Level.ERROR.value)
            + " Edit it to make a valid version, then approve that one."
        )
    scheme.repinned_items = 0
    if scheme.status == SchemeStatus.APPROVED:
        return scheme
    MarkingScheme.objects.filter(problem_id=scheme.problem_id, status=SchemeStatus.APPROVED).update(
        status=SchemeStatus.DRAFT, approved_by=None, approved_at=None
    )
    scheme.status = SchemeStatus.APPROVED
    scheme.approved_by = user
    scheme.approved_at = timezone.now()
    scheme.save(update_fields=["status", "approved_by", "approved_at"])
    replies = scheme_approved.send(
        sender=MarkingScheme, scheme_id=scheme.pk, problem_id=scheme.problem_id
    )
    scheme.repinned_items = sum(reply for _, reply in replies if isinstance(reply, int))
    return scheme


def scheme_freeze_if_approved(*, scheme_id: int) -> bool:
    """Freezes the version if it is the approved one, in one statement (a submission's path:
    nothing to do once frozen, and a version no longer approved stays as it is). Whether it
    was frozen now."""
    return bool(
        MarkingScheme.objects.filter(pk=scheme_id, status=SchemeStatus.APPROVED).update(
            status=SchemeStatus.FROZEN
        )
    )


@transaction.atomic
def scheme_freeze(*, scheme: MarkingScheme) -> MarkingScheme:
    """Freezes the approved version `scheme` (grades point at it): from then on its status
    never changes. Freezing a frozen version does nothing; a draft is refused."""
    scheme = MarkingScheme.objects.select_for_update().get(pk=scheme.pk)
    if scheme.status == SchemeStatus.FROZEN:
        return scheme
    if scheme.status != SchemeStatus.APPROVED:
        raise ValidationError(
            f"Version {scheme.version} is a draft: only the approved version can be frozen."
        )
    scheme_freeze_if_approved(scheme_id=scheme.pk)
    scheme.status = SchemeStatus.FROZEN
    return scheme


@transaction.atomic
def scheme_rate(
    *, scheme: MarkingScheme, rater: User, score: int, comment: str = ""
) -> SchemeRating:
    """The rater's 0-3 rating of `scheme` (0 invalid ... 3 high fidelity); rating again
    replaces the rater's earlier rating and comment. Experts and admins only."""
    if not has_role(rater, Role.EXPERT, Role.ADMIN):
        raise PermissionDenied("Only experts and admins rate marking schemes.")
    if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= 3:
        raise ValidationError({"score": f"A rating is a whole number from 0 to 3, not {score!r}."})
    rating, _ = SchemeRating.objects.update_or_create(
        scheme=scheme, rater=rater, defaults={"score": score, "comment": comment.strip()}
    )
    return rating


@dataclass
class ImportCounts:
    created: int = 0
    unchanged: int = 0
    problems: int = 0
    messages: list[str] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)  # the versions made: "PB-Basic-001 v1"

    SHOWN = 20

    def summary(self) -> str:
        """What the import made, in words ("" when it touched no scheme)."""
        if not self.created and not self.unchanged and not self.messages:
            return ""
        made = ", ".join(self.versions[: self.SHOWN])
        more = (
            f" and {len(self.versions) - self.SHOWN} more"
            if len(self.versions) > self.SHOWN
            else ""
        )
        parts = [
            f"{self.created} marking scheme version{'s' if self.created != 1 else ''} made"
            + (f": {made}{more}" if made else "")
        ]
        if self.unchanged:
            parts.append(f"{self.unchanged} already imported")
        return "; ".join(parts + self.messages) + "."


def _content_hash(fmt: str, content: object) -> str:
    canonical = json.dumps([fmt, content], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _imported_text(fmt: str, content: object, problem_id: str) -> str:
    """The Markdown kept as the version's text: the source text itself, or, for MathArena's
    JSON, the scheme written out in ProofBench's sections (the JSON when it does not parse)."""
    if isinstance(content, str):
        return content
    scheme = parse_scheme(content, fmt, problem_id=problem_id).scheme
    if scheme is not None:
        return scheme_to_markdown(scheme)
    return json.dumps(content, indent=1, ensure_ascii=False)


@transaction.atomic
def schemes_import_for_problems(*, problem_ids: Iterable[int]) -> ImportCounts:
    """Makes a version with method "imported" for every entry of each problem's
    `metadata["imported_schemes"]` (format in INTERFACES.md) not imported before: the same
    format and content, or the same text in the same text format as any version of the problem
    (a Proofmark export imported again), never makes a second version. An entry's `version`
    (a Proofmark export's scheme_version) is kept as the version number when it is free.
    Entries that do not parse still make a draft (IMO-ProofBench guidelines are kept as the
    version's guidelines)."""
    counts = ImportCounts()
    problems = (
        problems_with_imported_schemes(problem_ids=list(problem_ids))
        .select_for_update()
        .order_by("pk")
    )
    for problem in problems:
        entries = (problem.metadata or {}).get("imported_schemes") or []
        if not isinstance(entries, list) or not entries:
            continue
        counts.problems += 1
        versions = list(MarkingScheme.objects.filter(problem=problem).only("text", "provenance"))
        known = {(v.provenance or {}).get("content_sha256") for v in versions} - {None}
        texts = {(scheme_text_format(v), v.text) for v in versions}
        for index, entry in enumerate(entries):
            where = f'{problem.external_id}: metadata["imported_schemes"][{index}]'
            if not isinstance(entry, dict) or "format" not in entry or "content" not in entry:
                counts.messages.append(f"{where} needs a format and a content; skipped.")
                continue
            fmt, content = str(entry["format"]), entry["content"]
            digest = _content_hash(fmt, content)
            problem_key = problem.external_id
            text = _imported_text(fmt, content, problem_key)
            text_format = text_format_of(fmt)
            if digest in known or (text_format, text) in texts:
                counts.unchanged += 1
                continue
            stated = entry.get("version")
            made = scheme_version_create(
                problem=problem,
                text=text,
                method=SchemeMethod.IMPORTED,
                fmt=fmt,
                content=content if not isinstance(content, str) else None,
                provenance={
                    "source": str(entry.get("source", "")),
                    "format": fmt,
                    "content_sha256": digest,
                },
                version=stated if isinstance(stated, int) else None,
            )
            known.add(digest)
            texts.add((text_format, text))
            counts.created += 1
            counts.versions.append(f"{problem_key} v{made.version}")
    return counts
