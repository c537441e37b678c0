"""Expert ratings that came with imported datasets become judgements and final labels.

The corpus import keeps them in `Proof.metadata["imported_ratings"]` (kind "expert" here;
"automatic" ones are not expert judgements and stay in the metadata) and OPC's human error
spans in `Proof.metadata["imported_error_spans"]`. Each (source, scale) gets one closed
"imported" campaign; each rated proof one item there, pinned as annotation pins items to its
problem's current scheme version (the approved one, else the newest frozen one; the imported
grades freeze an approved one, as a first grade does); one grade per rating by a placeholder
rater account ("imported-rater-1", ...), and a final label of source "imported" that keeps the
native value and maximum beside the value on the campaign scale.
Running it again changes nothing (natural keys: campaign slug, item per proof, grade per rater).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from adjudication.agreement import apply_policy
from adjudication.models import LabelSource
from adjudication.services.labels import final_label_set
from annotation.models import (
    Campaign,
    CampaignStatus,
    ErrorSpan,
    Grade,
    GradeStatus,
    Item,
    LabelPolicy,
    default_error_taxonomy,
)
from annotation.scales import Scale, is_range, nearest, scale_spec
from annotation.services import campaign_create, expert_progress_count
from problems.models import Proof
from rubrics.models import MarkingScheme, SchemeStatus
from rubrics.selectors import schemes_approved_for_problems
from rubrics.services import scheme_freeze

RATER_PREFIX = "imported-rater-"


@dataclass
class ImportedReport:
    campaigns: set[str] = field(default_factory=set)
    items_created: int = 0
    labels: int = 0
    grades: int = 0
    spans: int = 0
    skipped: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = (
            f"{self.labels} imported label(s) in {len(self.campaigns)} campaign(s), "
            f"{self.items_created} new item(s), {self.grades} judgement(s), {self.spans} error "
            "span(s)"
        )
        if self.skipped:
            text += f"; skipped {len(self.skipped)}: " + "; ".join(self.skipped[:5])
        return text + "."


def _fmt(value: Decimal) -> str:
    return format(value.normalize(), "f")


def imported_on_scale(value: Decimal, maximum: Decimal) -> tuple[str, Decimal, str]:
    """A native rating on a campaign scale, its number kept (no rounding: a label may fall
    between two values of its scale): out of 7 -> 0-7 as it is, out of 1 -> 0 / 0.5 / 1 as it
    is, out of another whole number up to the widest range a campaign may use -> that range as
    it is (Putnam's 0-10, CMO's 0-21: the native scale, annotation.scales); anything else (a
    fractional or larger maximum) -> 0-7 by x * 7 / max (to the two decimals of a label).
    Returns (scale, value, how, in words). A judgement needs a value of the scale:
    `imported_grade_value`."""
    if maximum <= 0 or not Decimal(0) <= value <= maximum:
        raise ValueError(f"rating {_fmt(value)} is not within 0..{_fmt(maximum)}")
    if maximum in (7, 1):
        return (
            (Scale.ZERO_TO_SEVEN if maximum == 7 else Scale.TERNARY),
            value,
            f"{_fmt(value)}/{_fmt(maximum)}",
        )
    native = f"0-{_fmt(maximum)}"
    if maximum == maximum.to_integral_value() and is_range(native):
        return native, value, f"{_fmt(value)}/{_fmt(maximum)} on its native scale {native}"
    exact = value * 7 / maximum
    scaled = exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return (
        Scale.ZERO_TO_SEVEN,
        scaled,
        f"{_fmt(value)}/{_fmt(maximum)} normalised to 0-7: {_fmt(scaled)}",
    )


def imported_grade_value(value: Decimal, scale: str) -> Decimal:
    """The judgement an imported rating stands for: a value of the scale, the rating's number
    read as `annotation.scales.nearest` reads every label between two values (halfway, the
    lower: 6.5 -> 6)."""
    return nearest(value, scale_spec(scale).values)


def _campaign_for(source: str, scale: str, report: ImportedReport) -> Campaign:
    base = slugify(f"imported-{source}-{scale}")
    if len(base) > 80:
        base = base[:71] + "-" + hashlib.sha256(base.encode()).hexdigest()[:8]
    campaign = Campaign.objects.filter(slug=base).first()
    if campaign is None:
        campaign = campaign_create(
            name=f"Imported: {source} ({scale})"[:200],
            slug=base,
            created_by=None,
            scale=scale,
            double_share=Decimal(0),
            label_policy=LabelPolicy.MEAN,
            status=CampaignStatus.CLOSED,
            guidelines=f"Expert ratings shipped with the dataset {source}, kept as imported.",
        )
    report.campaigns.add(campaign.slug)
    return campaign


def _comment(source: str, value: Decimal, maximum: Decimal, said: str) -> str:
    """A judgement's comment: where it came from, the native score, and what its rater wrote."""
    head = f"Imported from {source}: {_fmt(value)} of {_fmt(maximum)}."
    return f"{head}\n{said}" if said else head


def _rater(n: int, known: dict[int, object]):
    if n in known:
        return known[n]
    user, created = get_user_model().objects.get_or_create(
        username=f"{RATER_PREFIX}{n}", defaults={"is_active": False}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    known[n] = user
    return user


def _ratings(proof: Proof, report: ImportedReport) -> dict[str, list[tuple[Decimal, Decimal]]]:
    """{source: [(value, max)]} of the proof's expert ratings."""
    by_source: dict[str, list[tuple[Decimal, Decimal]]] = defaultdict(list)
    entries = (proof.metadata or {}).get("imported_ratings") or []
    for n, entry in enumerate(entries if isinstance(entries, list) else [], start=1):
        if not isinstance(entry, dict) or entry.get("kind") != "expert":
            continue
        try:
            value, maximum = Decimal(str(entry["value"])), Decimal(str(entry["max"]))
            imported_on_scale(value, maximum)
        except (KeyError, InvalidOperation, ValueError) as exc:
            report.skipped.append(f"proof {proof.pk} imported_ratings[{n}]: {exc}")
            continue
        by_source[str(entry.get("source") or proof.source or "unknown")].append((value, maximum))
    return by_source


def _comments(proof: Proof) -> dict[str, list[str]]:
    """{source: [comment]} beside `_ratings`, in its order: what each rater wrote with the
    rating (MathArena's judges' details), "" where nothing."""
    by_source: dict[str, list[str]] = defaultdict(list)
    entries = (proof.metadata or {}).get("imported_ratings") or []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("kind") != "expert":
            continue
        try:
            imported_on_scale(Decimal(str(entry["value"])), Decimal(str(entry["max"])))
        except (KeyError, InvalidOperation, ValueError):
            continue
        source = str(entry.get("source") or proof.source or "unknown")
        by_source[source].append(str(entry.get("comment") or ""))
    return by_source


def _graded_under(proof: Proof, source: str, versions: dict[int, list[MarkingScheme]]):
    """The scheme version a rating of `source` was given under, when the import recorded it
    (`scheme`: the text's sha256 and its version number in the file, a Proofmark export's
    scheme_version): the problem's version with that text, the one of that number first."""
    for entry in (proof.metadata or {}).get("imported_ratings") or []:
        if not isinstance(entry, dict) or str(entry.get("source")) != source:
            continue
        named = entry.get("scheme")
        if not isinstance(named, dict):
            continue
        same = [
            v
            for v in versions.get(proof.problem_id, [])
            if hashlib.sha256(v.text.encode()).hexdigest() == named.get("text_sha256")
        ]
        same.sort(key=lambda v: (v.version != named.get("version"), v.version))
        if same:
            return same[0]
    return None


def _spans(proof: Proof, report: ImportedReport) -> list[dict]:
    entries = (proof.metadata or {}).get("imported_error_spans") or []
    kept = []
    for n, span in enumerate(entries if isinstance(entries, list) else [], start=1):
        try:
            start, end = int(span["start"]), int(span["end"])
        except (KeyError, TypeError, ValueError):
            report.skipped.append(f"proof {proof.pk} imported_error_spans[{n}]: no offsets")
            continue
        if not 0 <= start < end <= len(proof.text):
            report.skipped.append(
                f"proof {proof.pk} imported_error_spans[{n}]: [{start}, {end}) outside the proof"
            )
            continue
        kept.append(
            {
                "start": start,
                "end": end,
                "quote": proof.text[start:end],
                "category": slugify(str(span.get("category") or "other"))[:60] or "other",
                "label": str(span.get("category") or "Other"),
                "note": str(span.get("note") or ""),
            }
        )
    return kept


def _add_categories(campaign: Campaign, spans: list[dict]) -> None:
    taxonomy = campaign.error_taxonomy or default_error_taxonomy()
    known = {entry["key"] for entry in taxonomy}
    fresh = [
        {"key": s["category"], "label": s["label"]} for s in spans if s["category"] not in known
    ]
    if fresh:
        unique = list({entry["key"]: entry for entry in fresh}.values())
        campaign.error_taxonomy = taxonomy + unique
        campaign.save(update_fields=["error_taxonomy"])


@transaction.atomic
def imported_ratings_materialise(*, proofs: Iterable[Proof] | None = None) -> ImportedReport:
    """Judgements and "imported" final labels from the expert ratings of `proofs` (every proof
    that has some when None); OPC's human error spans on the first imported judgement."""
    report = ImportedReport()
    if proofs is None:
        proofs = Proof.objects.filter(metadata__has_key="imported_ratings")
    proofs = list(proofs)
    current = schemes_approved_for_problems({p.problem_id for p in proofs})
    versions: dict[int, list[MarkingScheme]] = defaultdict(list)
    for version in MarkingScheme.objects.filter(problem_id__in={p.problem_id for p in proofs}).only(
        "problem_id", "version", "text"
    ):
        versions[version.problem_id].append(version)
    now = timezone.now()
    raters: dict[int, object] = {}
    pinned: set[int] = set()
    for proof in proofs:
        spans = _spans(proof, report)
        first_grade = None
        comments = _comments(proof)
        for source, ratings in sorted(_ratings(proof, report).items()):
            scale = imported_on_scale(*ratings[0])[0]
            campaign = _campaign_for(source, scale, report)
            under = _graded_under(proof, source, versions)
            scheme = under if under is not None else current.get(proof.problem_id)
            item, created = Item.objects.get_or_create(
                campaign=campaign,
                proof=proof,
                analysis=None,
                defaults={
                    "required_judgements": len(ratings),
                    "submitted_count": len(ratings),
                    "needs_work": False,
                    "scheme": scheme,
                },
            )
            if under is not None and item.scheme_id != under.pk:
                item.scheme = under
                item.save(update_fields=["scheme"])
            report.items_created += int(created)
            if item.scheme_id is not None:
                pinned.add(item.scheme_id)
            grade_ids, values, hows = [], [], []
            for n, (value, maximum) in enumerate(ratings, start=1):
                _, scaled, how = imported_on_scale(value, maximum)
                grade, _ = Grade.objects.update_or_create(
                    item=item,
                    expert=_rater(n, raters),
                    defaults={
                        "status": GradeStatus.SUBMITTED,
                        "score": imported_grade_value(scaled, scale),
                        "comment": _comment(source, value, maximum, comments[source][n - 1]),
                        "scheme_id": item.scheme_id,
                    },
                )
                if grade.sequence is None:
                    grade.submitted_at = grade.submitted_at or now
                    grade.sequence = expert_progress_count(
                        campaign_id=campaign.pk, expert_id=grade.expert_id
                    )
                    grade.save(update_fields=["submitted_at", "sequence"])
                first_grade = first_grade or grade
                grade_ids.append(grade.pk)
                values.append(scaled)
                hows.append(how)
                report.grades += 1
            native = sum(v for v, _ in ratings) / len(ratings)
            # the ratings' numbers, kept: a mean between two values stays (6.5 stays 6.5)
            value, mean = apply_policy(values, LabelPolicy.MEAN, scale_spec(scale).values)
            final_label_set(
                item=item,
                value=value,
                source=LabelSource.IMPORTED,
                policy=f"imported from {source}: " + "; ".join(hows) + f"; {mean}",
                grade_ids=grade_ids,
                native_value=native,
                native_max=ratings[0][1],
            )
            report.labels += 1
            if spans and first_grade is not None and first_grade.item_id == item.pk:
                _add_categories(campaign, spans)
                ErrorSpan.objects.filter(grade=first_grade).delete()
                ErrorSpan.objects.bulk_create(
                    ErrorSpan(
                        grade=first_grade,
                        start=s["start"],
                        end=s["end"],
                        quote=s["quote"],
                        category=s["category"],
                        note=s["note"],
                    )
                    for s in spans
                )
                report.spans += len(spans)
    # submitted grades now point at these versions: approved ones freeze, as on a first grade
    for scheme in MarkingScheme.objects.filter(pk__in=pinned, status=SchemeStatus.APPROVED):
        scheme_freeze(scheme=scheme)
    return report
