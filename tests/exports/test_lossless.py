"""Export -> import -> export changes nothing (issue 23 item 1): a campaign with double scoring,
half-point labels, two checkpoint scheme versions and a band scheme goes out as `proofbench`
(JSONL, CSV, Parquet), into a fresh Proofmark through the corpus import (the imported ratings
becoming an imported campaign) and out again as `proofbench` and `dv`; the two exports agree
row by row on every value, and importing the same file again makes nothing new."""

import csv
import json
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from annotation.models import Campaign, Item
from exports.formats import ExportOptions
from exports.services import dataset_write
from problems.importers.base import SCHEME_FORMATS
from problems.models import Problem
from problems.services import corpus_import
from rubrics.models import MarkingScheme
from rubrics.services import scheme_approve, scheme_freeze, scheme_version_create
from rubrics.structure.parse import FORMATS
from tests.annotation.factories import SCHEME_TEXT, approved_scheme
from tests.exports.factories import grade, label, proof
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ReferenceSolutionFactory, sha256

pytestmark = pytest.mark.django_db

BANDS = "(Partial)\n 1. Found the invariant.\n(Almost)\n 1. Small gap at the end."
# The columns that describe the proof and its label; the others name this campaign's items
# (label_source, judgements, campaign, item_id, route_*), which an import makes anew.
PROOFBENCH_VALUES = (
    "problem_id", "problem", "reference_solution", "marking_scheme", "scheme_format",
    "scheme_version", "generator", "model_solution", "expert_rating", "metadata",
    "response_number", "generation_prompt", "sample_key", "licence",
)  # fmt: skip
DV_VALUES = (
    "problem_id", "problem", "proof", "score", "native_score", "generator", "sample_key",
    "licence",
)  # fmt: skip


def campaign_with_everything() -> Campaign:
    owner = UserFactory(username="lossless-owner", roles=["admin"])
    campaign = Campaign.objects.create(
        slug="lossless", name="Lossless", scale="0-7", label_policy="mean", created_by=owner
    )
    ann, bob = (UserFactory(username=f"lossless-{n}", roles=["expert"]) for n in ("ann", "bob"))
    p1 = ProblemFactory(
        external_id="LL-1", contest="Test Olympiad", year=2024, statement="Prove $x^2 \\ge 0$.",
        metadata={"licence": "CC-BY-4.0"},
    )  # fmt: skip
    p2 = ProblemFactory(external_id="LL-2", contest="Other Cup", year=2025, statement="Show it.")
    ReferenceSolutionFactory(problem=p1, text="Squares.", text_hash=sha256("ll-r1"))
    ReferenceSolutionFactory(problem=p2, text="Invariant.", text_hash=sha256("ll-r2"))
    v1 = scheme_freeze(scheme=approved_scheme(p1))  # graded under, then edited
    v2 = approved_scheme(p1, SCHEME_TEXT.replace("Set-up", "Reduction"))
    bands = scheme_version_create(
        problem=p2, text=BANDS, method="imported", fmt="imobench_guidelines"
    )
    assert bands.structure["kind"] == "bands"
    rows = [  # proof (problem, generator, sample key, index), scheme, the experts' scores
        ((p1, "model-a", "a", 0), v1, (6, 7)),  # 6.5: halfway, D_v reads it as 6 -> 0.5
        ((p1, "model-a", "b", 1), v2, (5, 5)),
        ((p1, "model-b", "0", 0), v2, (3, 4)),  # 3.5
        ((p2, "model-a", "0", 0), bands, (7,)),
        ((p2, "model-c", "0", 0), bands, (4, 5)),  # 4.5
    ]
    for (problem, generator, key, index), scheme, scores in rows:
        the_proof = proof(problem, generator, index, f"{problem.external_id} {generator} {key}.")
        the_proof.sample_key = key
        the_proof.save()
        item = Item.objects.create(
            campaign=campaign, proof=the_proof, scheme=scheme, required_judgements=len(scores)
        )
        grades = [grade(item, expert, s) for expert, s in zip((ann, bob), scores, strict=False)]
        mean = sum(Decimal(s) for s in scores) / len(scores)
        label(item, mean, "agreement" if len(scores) > 1 else "single", grades)
    return campaign


def read(path) -> list[dict]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines()]
    if path.suffix == ".csv":
        with path.open(newline="") as handle:
            return list(csv.DictReader(handle))
    return pq.read_table(path).to_pylist()


def values(path, columns) -> dict:
    rows = read(path)
    by_proof = {(r["problem_id"], r["generator"], r["sample_key"]): r for r in rows}
    assert len(by_proof) == len(rows)
    return {key: {c: row[c] for c in columns} for key, row in by_proof.items()}


def export(campaign, fmt, file_type, path):
    dataset_write(
        campaign=campaign, fmt=fmt, file_type=file_type, options=ExportOptions(), out=path
    )
    return path


def imported(path, capture):
    with capture(execute=True):
        report = corpus_import(path=path, fmt="proofbench")
    assert report.ok, report
    return Campaign.objects.get(slug__startswith="imported-")


@pytest.mark.parametrize("file_type", ["jsonl", "csv", "parquet"])
def test_export_import_export_changes_no_value(
    tmp_path, file_type, django_capture_on_commit_callbacks
):
    original = campaign_with_everything()
    first = export(original, "proofbench", file_type, tmp_path / f"first.{file_type}")
    first_dv = export(original, "dv", file_type, tmp_path / f"first-dv.{file_type}")
    assert {r["expert_rating"] for r in read(first)} >= {6.5, 3.5, 4.5} or file_type == "csv"

    Campaign.objects.all().delete()
    Problem.objects.all().delete()  # a fresh Proofmark: problems, proofs and schemes gone
    again = imported(first, django_capture_on_commit_callbacks)
    second = export(again, "proofbench", file_type, tmp_path / f"second.{file_type}")
    second_dv = export(again, "dv", file_type, tmp_path / f"second-dv.{file_type}")

    assert values(second, PROOFBENCH_VALUES) == values(first, PROOFBENCH_VALUES)
    assert values(second_dv, DV_VALUES) == values(first_dv, DV_VALUES)
    kinds = dict(MarkingScheme.objects.values_list("problem__external_id", "structure__kind"))
    assert kinds["LL-2"] == "bands"
    assert sorted(MarkingScheme.objects.values_list("problem__external_id", "version")) == [
        ("LL-1", 1), ("LL-1", 2), ("LL-2", 1),
    ]  # fmt: skip

    counts = (MarkingScheme.objects.count(), Item.objects.count(), Campaign.objects.count())
    with django_capture_on_commit_callbacks(execute=True):
        assert corpus_import(path=first, fmt="proofbench").ok
    assert (MarkingScheme.objects.count(), Item.objects.count(), Campaign.objects.count()) == (
        counts
    )
    third = export(again, "proofbench", file_type, tmp_path / f"third.{file_type}")
    assert values(third, PROOFBENCH_VALUES) == values(first, PROOFBENCH_VALUES)


def test_the_export_of_an_import_reimports_without_a_new_scheme_version(
    tmp_path, django_capture_on_commit_callbacks
):
    """Another file with the same schemes (the second export, under its own name) makes no
    scheme version: identical text in the same format is the version already there."""
    original = campaign_with_everything()
    first = export(original, "proofbench", "jsonl", tmp_path / "first.jsonl")
    Campaign.objects.all().delete()
    Problem.objects.all().delete()
    again = imported(first, django_capture_on_commit_callbacks)
    second = export(again, "proofbench", "jsonl", tmp_path / "second.jsonl")
    versions = MarkingScheme.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        assert corpus_import(path=second, fmt="proofbench").ok
    assert MarkingScheme.objects.count() == versions


def test_the_importer_knows_every_scheme_format_the_parser_reads():
    assert set(SCHEME_FORMATS) == set(FORMATS)


def test_the_real_deepseek_ratings_round_trip(
    tmp_path, real_fixtures, django_capture_on_commit_callbacks
):
    """DeepSeekMath-V2's human ratings (out of 7, 10 and 21) under IMO-ProofBench's band
    guidelines, imported, exported, imported into a fresh Proofmark and exported again: no
    label changes class, no row loses its scheme, no scheme changes kind."""
    admin = UserFactory(username="lossless-admin", roles=["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        assert corpus_import(path=real_fixtures / "imobench" / "proofbench_v2.csv").ok
    for version in MarkingScheme.objects.filter(is_valid=True):
        scheme_approve(scheme=version, user=admin)
    with django_capture_on_commit_callbacks(execute=True):
        assert corpus_import(path=real_fixtures / "deepseek_math_v2").ok
    rated = list(Campaign.objects.filter(slug__startswith="imported-").order_by("slug"))
    # one campaign per file of ratings, each on its ratings' native scale
    assert sorted(c.scale for c in rated) == ["0-10", "0-21", "0-7", "0-7"]
    firsts = []
    for n, campaign in enumerate(rated):
        firsts.append(
            (
                export(campaign, "proofbench", "jsonl", tmp_path / f"first{n}.jsonl"),
                export(campaign, "dv", "jsonl", tmp_path / f"first{n}-dv.jsonl"),
            )
        )
    rows = [row for first, _ in firsts for row in read(first)]
    # ProofBench's column is out of 7: 8/10 and 9/21 go there as 5.6 and 3
    assert len(rows) == 6 and {r["expert_rating"] for r in rows} >= {5.6, 3.0}
    banded = [r for r in rows if r["problem_id"].startswith("PB-")]
    assert len(banded) == 3 and all(r["scheme_format"] == "imobench_guidelines" for r in banded)

    Campaign.objects.all().delete()
    Problem.objects.all().delete()
    for n, (first, first_dv) in enumerate(firsts):
        with django_capture_on_commit_callbacks(execute=True):
            assert corpus_import(path=first, fmt="proofbench").ok
        # native_rating and native_scale bring each label back on its own scale
        again = Campaign.objects.get(slug__startswith=f"imported-proofbench-first{n}jsonl-")
        assert again.scale == rated[n].scale
        second = export(again, "proofbench", "jsonl", tmp_path / f"second{n}.jsonl")
        second_dv = export(again, "dv", "jsonl", tmp_path / f"second{n}-dv.jsonl")
        assert values(second, PROOFBENCH_VALUES) == values(first, PROOFBENCH_VALUES)
        assert values(second_dv, DV_VALUES) == values(first_dv, DV_VALUES)
    assert set(
        MarkingScheme.objects.filter(problem__external_id__startswith="PB-").values_list(
            "structure__kind", flat=True
        )
    ) == {"bands"}
