"""Edit, approve, freeze, rate and import: the writes of the rubrics app."""

import csv
import json

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import call_command
from django.db import IntegrityError, transaction

from problems.signals import corpus_imported
from rubrics.models import MarkingScheme, SchemeMethod, SchemeRating, SchemeStatus
from rubrics.selectors import scheme_approved_for_problem, scheme_diff
from rubrics.services import (
    scheme_approve,
    scheme_edit,
    scheme_freeze,
    scheme_rate,
    scheme_version_create,
    schemes_import_for_problems,
)
from rubrics.structure import Scheme
from tests.problems.page_factories import ProblemFactory
from tests.rubrics.factories import VALID_SCHEME

pytestmark = pytest.mark.django_db

INVALID_SCHEME = "## Checkpoints\n- (9 pts) **Everything**: all of it. [additive]\n"


@pytest.fixture
def scheme():
    return scheme_version_create(
        problem=ProblemFactory(), text=VALID_SCHEME, method=SchemeMethod.PROOFBENCH
    )


# --- edit --------------------------------------------------------------------------------


def test_edit_makes_a_new_version_pointing_at_the_edited_one(scheme, admin_user):
    edited = scheme_edit(
        scheme=scheme, text=VALID_SCHEME.replace("Cap at 5/7", "Cap at 4/7"), user=admin_user
    )
    scheme.refresh_from_db()
    assert edited.version == scheme.version + 1
    assert edited.previous == scheme
    assert edited.method == SchemeMethod.MANUAL
    assert edited.created_by == admin_user
    assert edited.provenance["edited_from"] == scheme.version
    assert scheme.text == VALID_SCHEME
    assert Scheme.from_dict(edited.structure).deductions[0].value == 4


def test_edit_saves_an_invalid_text_as_a_draft_with_its_problems(scheme, admin_user):
    edited = scheme_edit(scheme=scheme, text=INVALID_SCHEME, user=admin_user)
    assert edited.status == SchemeStatus.DRAFT
    assert not edited.is_valid
    assert any("7" in m["text"] for m in edited.validation if m["level"] == "error")


def test_edit_refuses_an_empty_or_unchanged_text(scheme, admin_user):
    with pytest.raises(ValidationError, match="empty"):
        scheme_edit(scheme=scheme, text="  \n", user=admin_user)
    with pytest.raises(ValidationError, match="Nothing changed"):
        scheme_edit(scheme=scheme, text=VALID_SCHEME.replace("\n", "\r\n"), user=admin_user)
    assert MarkingScheme.objects.filter(problem=scheme.problem).count() == 1


def test_editing_a_frozen_version_leaves_it_unchanged(scheme, admin_user):
    scheme_freeze(scheme=scheme_approve(scheme=scheme, user=admin_user))
    edited = scheme_edit(scheme=scheme, text=INVALID_SCHEME, user=admin_user)
    scheme.refresh_from_db()
    assert scheme.status == SchemeStatus.FROZEN
    assert scheme.text == VALID_SCHEME
    assert edited.previous == scheme and edited.status == SchemeStatus.DRAFT


def test_edit_keeps_the_text_format_unless_told(admin_user):
    guidelines = scheme_version_create(
        problem=ProblemFactory(),
        text="(Partial)\n 1. Found the invariant.",
        method=SchemeMethod.IMPORTED,
        fmt="imobench_guidelines",
    )
    assert guidelines.provenance["format"] == "imobench_guidelines"
    same_format = scheme_edit(
        scheme=guidelines, text="(Partial)\n 1. Found the invariant (2 pts).", user=admin_user
    )
    assert same_format.provenance["format"] == "imobench_guidelines"
    rewritten = scheme_edit(
        scheme=guidelines, text=VALID_SCHEME, user=admin_user, fmt="proofbench_markdown"
    )
    assert rewritten.is_valid and rewritten.provenance["format"] == "proofbench_markdown"
    with pytest.raises(ValidationError, match="Unknown scheme format"):
        scheme_edit(scheme=guidelines, text=VALID_SCHEME, user=admin_user, fmt="matharena_json")


def test_an_edited_matharena_version_is_read_as_proofbench_markdown(real_fixtures, admin_user):
    problem = ProblemFactory(metadata={"imported_schemes": [_matharena_entry(real_fixtures, "3")]})
    schemes_import_for_problems(problem_ids=[problem.pk])
    imported = problem.marking_schemes.get()
    edited = scheme_edit(scheme=imported, text=imported.text + "\n", user=admin_user)
    assert edited.provenance["format"] == "proofbench_markdown"
    assert edited.is_valid, edited.validation
    points = [cp.points for cp in Scheme.from_dict(imported.structure).leaves()]
    assert [cp.points for cp in Scheme.from_dict(edited.structure).leaves()] == points


# --- approve and freeze -------------------------------------------------------------------


def test_approving_a_new_version_returns_the_old_one_to_draft(scheme, admin_user):
    scheme_approve(scheme=scheme, user=admin_user)
    newer = scheme_edit(scheme=scheme, text=VALID_SCHEME + "\n", user=admin_user)
    scheme_approve(scheme=newer, user=admin_user)
    scheme.refresh_from_db()
    newer.refresh_from_db()
    assert newer.status == SchemeStatus.APPROVED
    assert newer.approved_by == admin_user and newer.approved_at is not None
    assert scheme.status == SchemeStatus.DRAFT and scheme.approved_at is None
    assert MarkingScheme.objects.filter(status=SchemeStatus.APPROVED).count() == 1


def test_approving_twice_is_harmless(scheme, admin_user):
    first = scheme_approve(scheme=scheme, user=admin_user)
    again = scheme_approve(scheme=scheme, user=admin_user)
    assert again.approved_at == first.approved_at


def test_the_database_refuses_two_approved_versions(scheme, admin_user):
    scheme_approve(scheme=scheme, user=admin_user)
    other = scheme_version_create(
        problem=scheme.problem, text=VALID_SCHEME, method=SchemeMethod.MANUAL
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        MarkingScheme.objects.filter(pk=other.pk).update(status=SchemeStatus.APPROVED)


def test_approving_an_invalid_version_is_refused_in_words(admin_user):
    invalid = scheme_version_create(
        problem=ProblemFactory(), text=INVALID_SCHEME, method=SchemeMethod.MANUAL
    )
    with pytest.raises(ValidationError) as caught:
        scheme_approve(scheme=invalid, user=admin_user)
    assert "cannot be approved" in caught.value.messages[0]
    invalid.refresh_from_db()
    assert invalid.status == SchemeStatus.DRAFT


def test_a_frozen_version_keeps_its_status(scheme, admin_user):
    scheme_freeze(scheme=scheme_approve(scheme=scheme, user=admin_user))
    with pytest.raises(ValidationError, match="frozen"):
        scheme_approve(scheme=scheme, user=admin_user)
    newer = scheme_edit(scheme=scheme, text=VALID_SCHEME + "\n", user=admin_user)
    scheme_approve(scheme=newer, user=admin_user)
    scheme.refresh_from_db()
    assert scheme.status == SchemeStatus.FROZEN


def test_only_the_approved_version_freezes(scheme):
    with pytest.raises(ValidationError, match="draft"):
        scheme_freeze(scheme=scheme)


# --- rate ---------------------------------------------------------------------------------


def test_rating_again_updates_the_one_rating(scheme, expert_user):
    scheme_rate(scheme=scheme, rater=expert_user, score=1, comment="Misses the bound.")
    rating = scheme_rate(scheme=scheme, rater=expert_user, score=3, comment=" Fine now. ")
    assert SchemeRating.objects.filter(scheme=scheme).count() == 1
    rating.refresh_from_db()
    assert (rating.score, rating.comment) == (3, "Fine now.")


def test_several_raters_rate_one_scheme(scheme, expert_user, expert2_user, admin_user):
    for user, score in ((expert_user, 2), (expert2_user, 0), (admin_user, 3)):
        scheme_rate(scheme=scheme, rater=user, score=score)
    assert sorted(scheme.ratings.values_list("score", flat=True)) == [0, 2, 3]


@pytest.mark.parametrize("score", [-1, 4, 2.5, "2", True])
def test_a_rating_outside_0_to_3_is_refused(scheme, expert_user, score):
    with pytest.raises(ValidationError, match="0 to 3"):
        scheme_rate(scheme=scheme, rater=expert_user, score=score)
    assert not SchemeRating.objects.exists()


def test_the_database_refuses_a_rating_above_3(scheme, expert_user):
    with pytest.raises(IntegrityError), transaction.atomic():
        SchemeRating.objects.create(scheme=scheme, rater=expert_user, score=4)


def test_researchers_and_adjudicators_do_not_rate(scheme, researcher_user, adjudicator_user):
    for user in (researcher_user, adjudicator_user):
        with pytest.raises(PermissionDenied):
            scheme_rate(scheme=scheme, rater=user, score=2)


# --- import -------------------------------------------------------------------------------


def _matharena_entry(real_fixtures, number: str) -> dict:
    data = json.loads((real_fixtures / "matharena_usamo2025" / "grading_scheme.json").read_text())
    items = next(entry["scheme"] for entry in data if entry["id"] == number)
    return {
        "format": "matharena_json",
        "source": "matharena_json grading_scheme.json",
        "content": items,
    }


def _proofbench_rows(real_fixtures) -> dict[str, dict]:
    with (real_fixtures / "imobench" / "proofbench_v2.csv").open(newline="") as handle:
        return {row["Problem ID"]: row for row in csv.DictReader(handle)}


def test_import_reads_matharena_and_proofbench_guidelines_from_metadata(real_fixtures):
    guidelines = _proofbench_rows(real_fixtures)["PB-Basic-001"]["Grading guidelines"]
    usamo = ProblemFactory(
        external_id="USAMO-2025-P1",
        metadata={"imported_schemes": [_matharena_entry(real_fixtures, "1")]},
    )
    basic = ProblemFactory(
        external_id="PB-Basic-001",
        metadata={
            "imported_schemes": [
                {
                    "format": "imobench_guidelines",
                    "source": "imobench_guidelines proofbench_v2.csv",
                    "content": guidelines,
                }
            ]
        },
    )
    counts = schemes_import_for_problems(problem_ids=[usamo.pk, basic.pk])
    assert (counts.created, counts.unchanged, counts.problems) == (2, 0, 2)

    matharena = usamo.marking_schemes.get()
    assert matharena.method == SchemeMethod.IMPORTED
    assert matharena.is_valid, matharena.validation
    structure = Scheme.from_dict(matharena.structure)
    assert [cp.points for cp in structure.leaves()] == [1, 3, 2, 1]
    assert "Interchanging the floor and mod" in matharena.text
    assert matharena.provenance["source"] == "matharena_json grading_scheme.json"

    bands = basic.marking_schemes.get()
    assert bands.method == SchemeMethod.IMPORTED
    assert bands.is_valid and bands.validation == []
    assert Scheme.from_dict(bands.structure).band("partial").lines[0] == (
        "Guessed the solution correctly"
    )
    assert bands.text == guidelines


def test_import_is_idempotent_and_adds_only_new_content(real_fixtures):
    entry = _matharena_entry(real_fixtures, "2")
    problem = ProblemFactory(metadata={"imported_schemes": [entry]})
    schemes_import_for_problems(problem_ids=[problem.pk])
    again = schemes_import_for_problems(problem_ids=[problem.pk])
    assert (again.created, again.unchanged) == (0, 1)
    assert problem.marking_schemes.count() == 1

    changed = dict(entry, content=[dict(entry["content"][0], points=9), *entry["content"][1:]])
    problem.metadata = {"imported_schemes": [entry, changed]}
    problem.save()
    counts = schemes_import_for_problems(problem_ids=[problem.pk])
    assert (counts.created, counts.unchanged) == (1, 1)
    assert list(problem.marking_schemes.order_by("version").values_list("version", "is_valid")) == [
        (1, True),
        (2, False),
    ]


def test_import_names_a_malformed_entry_and_goes_on():
    problem = ProblemFactory(
        external_id="X-1",
        metadata={
            "imported_schemes": [
                {"source": "nowhere"},
                {"format": "proofbench_markdown", "source": "pb", "content": VALID_SCHEME},
            ]
        },
    )
    counts = schemes_import_for_problems(problem_ids=[problem.pk])
    assert counts.created == 1
    assert counts.messages == [
        'X-1: metadata["imported_schemes"][0] needs a format and a content; skipped.'
    ]


def test_corpus_imported_signal_imports_the_schemes():
    problem = ProblemFactory(
        metadata={
            "imported_schemes": [
                {"format": "proofbench_markdown", "source": "pb x.csv", "content": VALID_SCHEME}
            ]
        }
    )
    corpus_imported.send(sender=None, problem_ids=[problem.pk])
    assert problem.marking_schemes.get().is_valid


def test_import_schemes_command_covers_rows_imported_before(capsys):
    entry = {"format": "proofbench_markdown", "source": "pb x.csv", "content": VALID_SCHEME}
    problems = [ProblemFactory(metadata={"imported_schemes": [entry]}) for _ in range(2)]
    ProblemFactory(metadata={})
    call_command("import_schemes")
    call_command("import_schemes")
    assert MarkingScheme.objects.count() == 2
    assert {s.problem_id for s in MarkingScheme.objects.all()} == {p.pk for p in problems}
    assert "0 version(s) created, 2 already imported" in capsys.readouterr().out


# --- selectors ------------------------------------------------------------------------------


def test_approved_for_problem_prefers_the_approved_then_the_newest_frozen(scheme, admin_user):
    assert scheme_approved_for_problem(scheme.problem_id) is None
    scheme_approve(scheme=scheme, user=admin_user)
    assert scheme_approved_for_problem(scheme.problem_id) == scheme
    scheme_freeze(scheme=scheme)
    assert scheme_approved_for_problem(scheme.problem_id) == scheme
    newer = scheme_edit(scheme=scheme, text=VALID_SCHEME + "\n", user=admin_user)
    assert scheme_approved_for_problem(scheme.problem_id) == scheme
    scheme_approve(scheme=newer, user=admin_user)
    assert scheme_approved_for_problem(scheme.problem_id) == newer


def test_diff_marks_added_and_removed_lines():
    lines = scheme_diff(old="a\nb\nc", new="a\nB\nc\nd")
    assert [(line.kind, line.text) for line in lines if line.kind != "hunk"] == [
        ("context", "a"),
        ("remove", "b"),
        ("add", "B"),
        ("context", "c"),
        ("add", "d"),
    ]


def test_every_real_sample_scheme_imports(real_fixtures):
    """All 60 IMO-ProofBench guidelines and the 6 MathArena USAMO 2025 schemes, put in
    metadata the way the corpus import does: each makes one valid version, IMO-ProofBench's
    guidelines a band scheme."""
    problems = []
    for problem_id, row in _proofbench_rows(real_fixtures).items():
        entry = {
            "format": "imobench_guidelines",
            "source": "imobench_guidelines proofbench_v2.csv",
            "content": row["Grading guidelines"],
        }
        problems.append(
            ProblemFactory(external_id=problem_id, metadata={"imported_schemes": [entry]})
        )
    for number in "123456":
        entry = _matharena_entry(real_fixtures, number)
        problems.append(
            ProblemFactory(
                external_id=f"USAMO-2025-{number}", metadata={"imported_schemes": [entry]}
            )
        )
    counts = schemes_import_for_problems(problem_ids=[p.pk for p in problems])
    assert (counts.created, counts.messages) == (66, [])
    matharena = MarkingScheme.objects.filter(problem__external_id__startswith="USAMO-2025-")
    assert all(s.is_valid for s in matharena)
    for scheme in MarkingScheme.objects.filter(problem__external_id__startswith="PB-"):
        assert scheme.method == SchemeMethod.IMPORTED
        assert scheme.is_valid, scheme.problem.external_id
        assert scheme.structure["kind"] == "bands", scheme.problem.external_id
    assert schemes_import_for_problems(problem_ids=[p.pk for p in problems]).created == 0
