from decimal import Decimal

import pytest

from rubrics.models import MarkingScheme, SchemeMethod, SchemeStatus
from rubrics.services import scheme_version_create
from rubrics.structure import Scheme
from tests.problems.page_factories import ProblemFactory
from tests.rubrics.factories import VALID_SCHEME

pytestmark = pytest.mark.django_db


def test_version_create_parses_validates_and_numbers_versions():
    problem = ProblemFactory()
    first = scheme_version_create(problem=problem, text=VALID_SCHEME, method=SchemeMethod.MANUAL)
    second = scheme_version_create(
        problem=problem, text=VALID_SCHEME, method=SchemeMethod.MANUAL, previous=first
    )
    assert (first.version, second.version) == (1, 2)
    assert second.previous == first
    assert first.status == SchemeStatus.DRAFT
    assert first.is_valid
    scheme = Scheme.from_dict(first.structure)
    assert list(scheme.chain_totals().values()) == [Decimal(7)]
    assert len(scheme.deductions) == 1


def test_version_create_keeps_an_invalid_scheme_as_a_draft_with_messages_in_words():
    problem = ProblemFactory()
    text = "## Checkpoints\n- (9 pts) **Everything**: all of it. [additive]\n"
    scheme = scheme_version_create(problem=problem, text=text, method=SchemeMethod.MANUAL)
    assert not scheme.is_valid
    assert scheme.status == SchemeStatus.DRAFT
    assert scheme.text == text
    errors = [m for m in scheme.validation if m["level"] == "error"]
    assert errors and "7" in errors[0]["text"]


def test_version_create_keeps_unparsed_guidelines():
    problem = ProblemFactory()
    text = "Credit the key lemma; a small gap at the end costs a point."
    scheme = scheme_version_create(
        problem=problem, text=text, method=SchemeMethod.IMPORTED, fmt="imobench_guidelines"
    )
    assert scheme.structure == {}
    assert not scheme.is_valid
    assert "key lemma" in scheme.guidelines


def test_version_create_reads_matharena_content():
    problem = ProblemFactory()
    content = [
        {"title": "Lemma", "points": 3, "desc": "Proves the lemma."},
        {"title": "Finish", "points": 4, "desc": "Concludes."},
    ]
    scheme = scheme_version_create(
        problem=problem,
        text="MathArena scheme",
        method=SchemeMethod.IMPORTED,
        fmt="matharena_json",
        content=content,
    )
    assert scheme.is_valid, scheme.validation
    assert len(Scheme.from_dict(scheme.structure).leaves()) == 2


def test_migration_reads_earlier_imported_guidelines_again_as_band_schemes():
    from importlib import import_module

    from django.apps import apps

    reparse = import_module("rubrics.migrations.0006_imobench_guidelines_as_bands").reparse
    text = "(Partial)\n 1. Found the invariant.\n(Almost)\n 1. Small gap."
    old = MarkingScheme.objects.create(
        problem=ProblemFactory(),
        version=1,
        method=SchemeMethod.IMPORTED,
        text=text,
        guidelines=text,
        structure={},
        validation=[
            {"level": "warning", "text": "kept as free guidelines", "where": "", "line": None}
        ],
        is_valid=False,
        provenance={"format": "imobench_guidelines"},
    )
    reparse(apps, None)
    old.refresh_from_db()
    assert old.is_valid and old.validation == [] and old.guidelines == ""
    assert old.structure["kind"] == "bands"
    assert old.structure["bands"][2]["lines"] == ["Found the invariant."]
