"""A proofbench export re-imports through the corpus importer into an equal corpus, and the files
load with Hugging Face `datasets` (offline) and pandas with the documented columns and types."""

import json
import os
from decimal import Decimal

import pandas as pd
import pytest
from pandas.api import types as pdtypes

from adjudication.models import FinalLabel
from annotation.models import Campaign, Item
from exports.formats import ExportOptions, plan_for
from exports.services import dataset_write
from problems.models import Problem, Proof, ReferenceSolution
from problems.services import corpus_import
from tests.exports.factories import labelled_campaign
from tests.problems.import_files import proofbench_row, write_jsonl

pytestmark = pytest.mark.django_db


def corpus_snapshot() -> dict:
    return {
        "problems": set(Problem.objects.values_list("external_id", "statement", "contest", "year")),
        "references": set(ReferenceSolution.objects.values_list("problem__external_id", "text")),
        "proofs": set(
            Proof.objects.values_list(
                "problem__external_id", "generator", "sample_key", "sample_index", "text"
            )
        ),
        "prompts": {
            (p.problem.external_id, p.generator, p.metadata.get("generation_prompt", ""))
            for p in Proof.objects.select_related("problem")
        },
    }


@pytest.mark.parametrize("file_type", ["jsonl", "csv", "parquet"])
def test_proofbench_export_reimports_into_an_equal_corpus(tmp_path, file_type):
    corpus = labelled_campaign()
    labels = {
        (i.proof.problem.external_id, i.proof.generator): float(i.final_label.value)
        for i in corpus.campaign.items.select_related("proof__problem", "final_label")
    }
    schemes = {i.proof.problem.external_id: i.scheme.text for i in corpus.campaign.items.all()}
    before = corpus_snapshot()
    out = tmp_path / f"pb.{file_type}"
    dataset_write(
        campaign=corpus.campaign,
        fmt="proofbench",
        file_type=file_type,
        options=ExportOptions(),
        out=out,
    )

    Campaign.objects.filter(pk=corpus.campaign.pk).delete()
    Problem.objects.all().delete()
    assert not Proof.objects.exists()

    report = corpus_import(path=out, fmt="proofbench")
    assert report.ok, report
    assert corpus_snapshot() == before
    ratings = {
        (p.problem.external_id, p.generator): [r["value"] for r in p.metadata["imported_ratings"]]
        for p in Proof.objects.select_related("problem")
    }
    assert ratings == {key: [value] for key, value in labels.items()}
    for problem in Problem.objects.all():
        imported = problem.metadata["imported_schemes"]
        assert [s["content"] for s in imported] == [schemes[problem.external_id]]


def test_the_licence_column_comes_from_the_import_and_survives_a_round_trip(tmp_path):
    rows = [proofbench_row(1), proofbench_row(2, licence="CC0-1.0")]
    assert corpus_import(path=write_jsonl(tmp_path / "rows.jsonl", rows)).ok
    campaign = Campaign.objects.create(slug="licences", name="Licences")
    for proof in Proof.objects.order_by("id"):
        FinalLabel.objects.create(
            item=Item.objects.create(campaign=campaign, proof=proof),
            value=Decimal(5),
            scale="0-7",
            source="imported",
            policy="tests",
        )
    out = tmp_path / "pb.jsonl"
    manifest = dataset_write(
        campaign=campaign, fmt="proofbench", file_type="jsonl", options=ExportOptions(), out=out
    )
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    # T-001 had no licence of its own: ProofBench's (MIT), recorded by the import.
    assert {r["problem_id"]: r["licence"] for r in exported} == {"T-001": "MIT", "T-002": "CC0-1.0"}
    assert manifest["licences"] == ["CC0-1.0", "MIT"]

    Campaign.objects.all().delete()
    Problem.objects.all().delete()
    assert corpus_import(path=out).ok
    licences = dict(Proof.objects.values_list("problem__external_id", "metadata__licence"))
    assert licences == {"T-001": "MIT", "T-002": "CC0-1.0"}


@pytest.fixture
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    return tmp_path


EXPECTED_PANDAS = {
    "proofbench": {
        "problem_id": "string",
        "expert_rating": "int",
        "response_number": "int",
        "scheme_version": "int",
        "judgements": "int",
        "metadata": "nested",
    },
    "dv": {"score": "float", "native_score": "float", "judgements": "int", "proof": "string"},
    "annotations": {
        "grade_id": "int",
        "score": "float",
        "is_gold": "bool",
        "seconds_spent": "int",
        "spans": "json",
    },
}
PANDAS_CHECKS = {
    "string": pdtypes.is_string_dtype,
    "int": pdtypes.is_integer_dtype,
    "float": pdtypes.is_float_dtype,
    "bool": pdtypes.is_bool_dtype,
    "nested": pdtypes.is_object_dtype,
}


@pytest.mark.parametrize("fmt", ["proofbench", "dv", "annotations"])
@pytest.mark.parametrize("file_type", ["jsonl", "parquet"])
def test_files_load_with_datasets_and_pandas(offline, fmt, file_type):
    import datasets

    corpus = labelled_campaign()
    out = offline / f"{fmt}.{file_type}"
    dataset_write(
        campaign=corpus.campaign, fmt=fmt, file_type=file_type, options=ExportOptions(), out=out
    )
    documented = [f.name for f in plan_for(fmt, corpus.campaign, ExportOptions()).fields]

    builder = "json" if file_type == "jsonl" else "parquet"
    assert os.environ["HF_DATASETS_OFFLINE"] == "1"
    ds = datasets.load_dataset(
        builder, data_files=str(out), split="train", cache_dir=str(offline / "cache")
    )
    assert ds.column_names == documented
    assert ds.num_rows == 3 if fmt != "annotations" else 4
    if fmt == "proofbench":
        assert ds.features["expert_rating"].dtype == "int64"
        assert ds.features["metadata"]["contest_year"].dtype == "int64"
        assert ds[0]["metadata"] == {"contest": "Test Olympiad", "contest_year": 2024}
    if fmt == "dv":
        assert ds.features["score"].dtype == "float64"
        assert sorted(ds["score"]) == [0.0, 0.5, 1.0]

    # As the README says: JSON Lines through read_json(lines=True, dtype=False), so that pandas
    # keeps JSON's own types (it would otherwise turn 5.0 into the integer 5).
    if file_type == "jsonl":
        frame = pd.read_json(out, lines=True, dtype=False)
    else:
        frame = pd.read_parquet(out)
    assert list(frame.columns) == documented
    for column, kind in EXPECTED_PANDAS[fmt].items():
        if kind == "json":  # nested in JSON Lines, JSON text in Parquet
            kind = "nested" if file_type == "jsonl" else "string"
        assert PANDAS_CHECKS[kind](frame[column]), (column, frame[column].dtype)
