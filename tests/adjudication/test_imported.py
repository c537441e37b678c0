"""Imported expert ratings become judgements and "imported" final labels; OPC's error spans
become imported error spans; idempotent."""

from decimal import Decimal

import pytest

from adjudication.models import FinalLabel
from adjudication.services import imported_on_scale, imported_ratings_materialise
from adjudication.services.imported import imported_grade_value
from annotation.models import Campaign, ErrorSpan, Grade, Item
from problems.signals import corpus_imported
from rubrics.services import scheme_freeze
from tests.annotation.factories import approved_scheme
from tests.problems.page_factories import ProofFactory

pytestmark = pytest.mark.django_db

TEXT = "We claim n = 3 works. Checking n = 3 by hand gives the result. Done."


def rating(source, value, maximum, kind="expert"):
    return {"source": source, "kind": kind, "value": value, "max": maximum, "raw": value}


@pytest.mark.parametrize(
    ("value", "maximum", "scale", "scaled", "grade"),
    [
        ("7", "7", "0-7", "7", "7"),
        ("6.5", "7", "0-7", "6.5", "6"),  # kept; the judgement halfway reads as the lower
        ("8", "10", "0-10", "8", "8"),  # Putnam's native scale
        ("9", "21", "0-21", "9", "9"),  # CMO's
        ("8.5", "10", "0-10", "8.5", "8"),
        ("40", "60", "0-7", "4.67", "5"),  # wider than a campaign may be: normalised
        ("3", "7.5", "0-7", "2.8", "3"),
        ("0", "1", "0-0.5-1", "0", "0"),
        ("0.75", "1", "0-0.5-1", "0.75", "0.5"),
    ],
)
def test_native_values_onto_a_campaign_scale(value, maximum, scale, scaled, grade):
    found_scale, found, how = imported_on_scale(Decimal(value), Decimal(maximum))
    assert (found_scale, found) == (scale, Decimal(scaled))
    assert imported_grade_value(found, scale) == Decimal(grade)
    assert how.startswith(f"{value}/{maximum}")


def test_out_of_range_rating_is_refused():
    with pytest.raises(ValueError, match="not within 0..7"):
        imported_on_scale(Decimal(8), Decimal(7))


def test_materialise_ratings_and_spans_idempotently():
    putnam = ProofFactory(
        metadata={
            "imported_ratings": [
                rating("deepseek:putnam.jsonl", 8, 10),
                rating("deepseek:putnam.jsonl", 0.9, 1, kind="automatic"),
            ]
        }
    )
    opc = ProofFactory(
        text=TEXT,
        metadata={
            "imported_ratings": [rating("opc:test.jsonl", 0, 1)],
            "imported_error_spans": [
                {
                    "start": 22,
                    "end": 62,
                    "quote": TEXT[22:62],
                    "category": "Proof by example",
                    "note": "one case only",
                },
                {"start": 5, "end": 999, "quote": "", "category": "x", "note": ""},
            ],
        },
    )
    report = imported_ratings_materialise()
    assert (report.labels, report.grades, report.spans, report.items_created) == (2, 2, 1, 2)
    assert "outside the proof" in report.skipped[0]

    label = FinalLabel.objects.get(item__proof=putnam)
    # Putnam's 8/10 stays 8 on its native 0-10 scale, in a campaign of that scale
    assert (label.value, label.scale, label.source) == (Decimal("8"), "0-10", "imported")
    assert label.item.grades.get().score == Decimal(8)
    assert (label.native_value, label.native_max) == (Decimal("8"), Decimal("10"))
    assert "native scale 0-10" in label.policy
    assert label.item.campaign.scale == "0-10"
    campaign = label.item.campaign
    assert campaign.slug.startswith("imported-deepseek") and campaign.status == "closed"
    assert label.item.is_final and not label.item.needs_work

    opc_label = FinalLabel.objects.get(item__proof=opc)
    assert (opc_label.value, opc_label.scale) == (Decimal("0"), "0-0.5-1")
    span = ErrorSpan.objects.get(grade__item__proof=opc)
    assert (span.quote, span.category, span.note) == (
        TEXT[22:62],
        "proof-by-example",
        "one case only",
    )
    assert "proof-by-example" in opc_label.item.campaign.taxonomy_labels()

    again = imported_ratings_materialise()
    assert again.items_created == 0
    assert Campaign.objects.filter(slug__startswith="imported-").count() == 2
    assert Item.objects.count() == 2 and Grade.objects.count() == 2
    assert ErrorSpan.objects.count() == 1 and FinalLabel.objects.count() == 2


def test_a_corpus_import_materialises_its_ratings():
    proof = ProofFactory(metadata={"imported_ratings": [rating("proofbench:x.csv", 5, 7)]})
    corpus_imported.send(sender=None, problem_ids=[proof.problem_id])
    assert FinalLabel.objects.get(item__proof=proof).value == Decimal("5")


def test_items_are_pinned_to_the_current_scheme_version_approved_or_frozen():
    frozen_only = ProofFactory(metadata={"imported_ratings": [rating("proofbench:x.csv", 5, 7)]})
    frozen = scheme_freeze(scheme=approved_scheme(frozen_only.problem))
    both = ProofFactory(metadata={"imported_ratings": [rating("proofbench:x.csv", 6, 7)]})
    scheme_freeze(scheme=approved_scheme(both.problem))
    newer = approved_scheme(both.problem)  # v2 approved after v1 was frozen by grades
    neither = ProofFactory(metadata={"imported_ratings": [rating("proofbench:x.csv", 2, 7)]})

    imported_ratings_materialise()

    item = Item.objects.get(proof=frozen_only)
    assert item.scheme_id == frozen.pk and frozen.status == "frozen"
    assert set(item.grades.values_list("scheme_id", flat=True)) == {frozen.pk}
    assert Item.objects.get(proof=both).scheme_id == newer.pk
    assert Item.objects.get(proof=neither).scheme_id is None
    newer.refresh_from_db()
    assert newer.status == "frozen"  # imported grades point at it, as a first grade would
