"""Golden files per format (small, written by us), filters, splits and scale conversions.

Regenerate the golden files after an intended change with UPDATE_GOLDEN=1.
"""

import csv
import io
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from adjudication.models import FinalLabel
from exports.formats import ExportError, ExportOptions, base, split_of
from exports.formats.base import ReadOnce, SchemeColumns
from exports.services import companion_paths, dataset_write
from tests.exports.factories import labelled_campaign, reviewed_campaign

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

pytestmark = pytest.mark.django_db


def export(corpus, fmt, file_type, tmp_path, **filters):
    out = tmp_path / f"{fmt}.{file_type}"
    manifest = dataset_write(
        campaign=corpus.campaign,
        fmt=fmt,
        file_type=file_type,
        options=ExportOptions.from_dict(filters),
        out=out,
    )
    return out, manifest


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def normalised(records):
    """Database ids and pseudonyms vary between runs: replace them by their order of appearance."""
    seen: dict[tuple, int] = {}

    def ordinal(kind, value):
        if value is None:
            return None
        return f"{kind}#{seen.setdefault((kind, value), len([k for k in seen if k[0] == kind]))}"

    out = []
    for record in records:
        record = dict(record)
        for key in ("grade_id", "item_id", "analysis_id"):
            if key in record:
                record[key] = ordinal(key, record[key])
        if "expert" in record:
            record["expert"] = ordinal("expert", record["expert"])
        for revision in record.get("history", []):
            revision["changed_by"] = ordinal("expert", revision["changed_by"])
            revision["changed_at"] = "<time>"
        out.append(record)
    return out


def ids_as_ordinals(text: str) -> str:
    """A CSV export with its item ids (which vary between runs) numbered by appearance."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    column = rows[0].index("item_id")
    seen: dict[str, int] = {}
    for row in rows[1:]:
        row[column] = f"item_id#{seen.setdefault(row[column], len(seen))}"
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def check_golden(name, records):
    path = GOLDEN / name
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs from its golden file"


@pytest.mark.parametrize("fmt", ["proofbench", "dv", "annotations"])
def test_golden_jsonl_per_format(tmp_path, fmt):
    corpus = labelled_campaign()
    out, manifest = export(corpus, fmt, "jsonl", tmp_path)
    records = read_jsonl(out)
    check_golden(f"{fmt}.jsonl", normalised(records))
    assert manifest["counts"]["rows"] == len(records)
    assert [c["name"] for c in manifest["columns"]] == list(records[0])


def test_golden_dmv(tmp_path):
    corpus = reviewed_campaign()
    out, manifest = export(corpus, "dmv", "jsonl", tmp_path)
    check_golden("dmv.jsonl", normalised(read_jsonl(out)))
    assert manifest["conversions"] == []


def test_golden_proofbench_csv(tmp_path):
    corpus = labelled_campaign()
    out, _ = export(corpus, "proofbench", "csv", tmp_path)
    text = ids_as_ordinals(out.read_text())
    if UPDATE:
        (GOLDEN / "proofbench.csv").write_text(text)
    assert text == (GOLDEN / "proofbench.csv").read_text()
    rows = list(csv.DictReader(out.open()))
    assert json.loads(rows[0]["metadata"]) == {"contest": "Test Olympiad", "contest_year": 2024}


@pytest.mark.parametrize("fmt", ["proofbench", "dv", "annotations"])
def test_parquet_holds_the_same_records_as_jsonl(tmp_path, fmt):
    corpus = labelled_campaign()
    jsonl, _ = export(corpus, fmt, "jsonl", tmp_path)
    parquet, _ = export(corpus, fmt, "parquet", tmp_path)
    from_parquet = pq.read_table(parquet).to_pylist()
    from_jsonl = read_jsonl(jsonl)
    json_columns = {
        "awards",
        "deductions",
        "via_equivalent",
        "step_verdicts",
        "spans",
        "history",
        "route_components",
    }
    for row in from_parquet:
        for key in json_columns & row.keys():
            row[key] = json.loads(row[key])
    assert from_parquet == from_jsonl


def test_manifest_and_card_beside_the_data_file(tmp_path):
    corpus = labelled_campaign()
    out, manifest = export(corpus, "dv", "parquet", tmp_path)
    manifest_path, card_path = companion_paths(out)
    assert json.loads(manifest_path.read_text()) == manifest
    assert manifest["schema_version"] == 1
    assert manifest["files"]["dv.parquet"]["rows"] == 3
    assert len(manifest["files"]["dv.parquet"]["sha256"]) == 64
    assert manifest["files"]["dv.parquet.README.md"]["size"] == card_path.stat().st_size
    assert manifest["conversions"][0]["cuts"] == [5, 7]
    assert manifest["licences"] == ["CC-BY-4.0", "MIT"]
    card = card_path.read_text()
    assert "by cut points 5 and 7: 7 -> 1, 5-6 -> 0.5, 0-4 -> 0" in card
    assert "| `score` | float |" in card
    assert "CC-BY-4.0, MIT" in card


def test_dv_converts_0_7_by_the_stated_cut_points(tmp_path):
    corpus = labelled_campaign()
    out, _ = export(corpus, "dv", "jsonl", tmp_path, cuts=[4, 6])
    scores = {(r["problem_id"], r["generator"]): r["score"] for r in read_jsonl(out)}
    # labels 5 (4 <= 5 < 6 -> 0.5), 2 (-> 0), 7 (-> 1)
    assert scores == {
        ("GOLDEN-PILOT-1", "model-a"): 0.5,
        ("GOLDEN-PILOT-1", "model-b"): 0.0,
        ("GOLDEN-PILOT-2", "model-a"): 1.0,
    }


def test_proofbench_from_a_1_4_campaign_is_converted_and_says_so(tmp_path):
    corpus = labelled_campaign(slug="refgrader", scale="1-4")
    out, manifest = export(corpus, "proofbench", "jsonl", tmp_path)
    assert [r["expert_rating"] for r in read_jsonl(out)] == [5, 1, 7]  # 3, 1, 4 by 2x - 1
    assert manifest["conversions"][0]["from"] == "1-4"


def test_formats_that_do_not_fit_the_campaign_are_refused(tmp_path):
    review = reviewed_campaign()
    with pytest.raises(ExportError, match="proof-grading campaign"):
        export(review, "proofbench", "jsonl", tmp_path)
    with pytest.raises(ExportError, match="analysis-review campaign"):
        export(labelled_campaign(), "dmv", "jsonl", tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"contest": "Other Cup"}, {"GOLDEN-PILOT-2"}),
        ({"year": 2024}, {"GOLDEN-PILOT-1"}),
        ({"generator": "model-b"}, {"GOLDEN-PILOT-1"}),
        ({"label_sources": ["adjudication", "single"]}, {"GOLDEN-PILOT-1", "GOLDEN-PILOT-2"}),
        ({"min_agreement": 0.8}, {"GOLDEN-PILOT-1"}),  # 6 and 5: spread 1 <= 0.2 * 7
        ({"min_agreement": 0.9}, set()),
    ],
)
def test_filters(tmp_path, filters, expected):
    corpus = labelled_campaign()
    out, manifest = export(corpus, "proofbench", "jsonl", tmp_path, **filters)
    records = read_jsonl(out)
    assert {r["problem_id"] for r in records} == expected
    if "label_sources" in filters:
        assert {r["label_source"] for r in records} == {"adjudication", "single"}
    assert manifest["counts"]["rows"] == len(records)


def test_splits_are_by_problem_and_deterministic(tmp_path):
    corpus = labelled_campaign()
    out, _ = export(corpus, "proofbench", "jsonl", tmp_path, test_fraction=0.5, split_seed=3)
    records = read_jsonl(out)
    by_problem: dict[str, set] = {}
    for record in records:
        by_problem.setdefault(record["problem_id"], set()).add(record["split"])
    assert all(len(splits) == 1 for splits in by_problem.values())
    assert {r["split"] for r in records} <= {"train", "test"}
    ids = [f"P-{i}" for i in range(1000)]
    test_share = sum(split_of(i, 3, 0.2) == "test" for i in ids) / len(ids)
    assert 0.15 < test_share < 0.25
    assert [split_of(i, 3, 0.2) for i in ids] == [split_of(i, 3, 0.2) for i in ids]
    only_test, _ = export(
        corpus,
        "proofbench",
        "jsonl",
        tmp_path / "t",
        test_fraction=0.5,
        split_seed=3,
        split="test",
    )
    assert [r for r in records if r["split"] == "test"] == read_jsonl(only_test)


def test_bad_filters_are_named():
    with pytest.raises(ExportError, match="label_sources: unknown guess"):
        ExportOptions.from_dict({"label_sources": ["guess"]})
    with pytest.raises(ExportError, match="year: 'soon' is not a number"):
        ExportOptions.from_dict({"year": "soon"})
    with pytest.raises(ExportError, match="min_agreement"):
        ExportOptions.from_dict({"min_agreement": 2})


def test_a_problems_columns_are_read_once_across_batches(tmp_path, monkeypatch):
    corpus = labelled_campaign()
    monkeypatch.setattr(base, "FIRST_BATCH", 1)  # one label a batch: three batches, two problems
    monkeypatch.setattr(base, "BATCH_CHARS", 1)
    with CaptureQueriesContext(connection) as queries:
        out, _ = export(corpus, "proofbench", "jsonl", tmp_path)
    check_golden("proofbench.jsonl", normalised(read_jsonl(out)))
    reads = [q["sql"] for q in queries if q["sql"].startswith('SELECT "problems_problem"."id"')]
    assert len(reads) == 2


@pytest.mark.parametrize(("chars", "sizes"), [(10**9, [1, 2]), (1, [1, 1, 1])])
def test_batches_are_sized_by_the_width_of_the_rows(monkeypatch, chars, sizes):
    corpus = labelled_campaign()
    monkeypatch.setattr(base, "FIRST_BATCH", 1)
    monkeypatch.setattr(base, "BATCH", 10)
    monkeypatch.setattr(base, "BATCH_CHARS", chars)
    labels = FinalLabel.objects.filter(item__campaign=corpus.campaign)
    batches = list(base._batches(labels, {"_pk": "id", "proof": "item__proof__text"}))
    assert [len(batch) for batch in batches] == sizes
    assert [row["_pk"] for batch in batches for row in batch] == sorted(
        labels.values_list("id", flat=True)
    )


def test_what_is_read_once_is_kept_within_its_bound():
    loaded: list[set] = []

    def load(keys):
        loaded.append(set(keys))
        return {key: SchemeColumns(1, "x" * 10, "proofbench_markdown") for key in keys}

    held = ReadOnce(load, limit=25)  # room for two texts of 10 characters
    assert set(held.get({1, 2})) == {1, 2}
    assert set(held.get({2, 3})) == {2, 3}  # 1, the least recently used, is dropped
    assert set(held.get({1, 3})) == {1, 3}
    assert loaded == [{1, 2}, {3}, {1}]
    assert held.chars <= 25
