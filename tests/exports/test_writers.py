"""The streaming writers: each file type reads back with the declared columns; Parquet row groups
are bounded; an error while writing leaves no file under the final name."""

import csv
import hashlib
import json
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from exports.writers import Field, render_card, write_rows

FIELDS = [
    Field("id", "string", "row id"),
    Field("score", "float", "a score"),
    Field("count", "int", "a count"),
    Field("flag", "bool", "a flag"),
    Field("extra", "json", "nested data"),
    Field(
        "meta", "struct", "fixed nested", (Field("contest", "string", ""), Field("year", "int", ""))
    ),
]


def rows(n):
    for i in range(n):
        yield {
            "id": f"r{i}",
            "score": Decimal("0.5") if i % 2 else 7,
            "count": i,
            "flag": i % 3 == 0,
            "extra": {"awards": {"c1": i}, "spans": [[0, 4]]},
            "meta": {"contest": "IMO", "year": 2025 if i else None},
        }


@pytest.mark.parametrize("file_type", ["jsonl", "csv", "parquet"])
def test_each_file_type_reads_back(tmp_path, file_type):
    path = tmp_path / f"data.{file_type}"
    seen = []
    result = write_rows(
        rows=rows(12), fields=FIELDS, file_type=file_type, path=path, on_progress=seen.append
    )
    assert result.rows == 12
    assert result.size == path.stat().st_size
    assert result.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert seen[-1] == 12
    if file_type == "jsonl":
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert records[1]["score"] == 0.5 and records[0]["meta"]["year"] is None
        assert records[3]["extra"] == {"awards": {"c1": 3}, "spans": [[0, 4]]}
    elif file_type == "csv":
        records = list(csv.DictReader(path.open()))
        assert records[1]["score"] == "0.5" and records[0]["flag"] == "true"
        assert json.loads(records[3]["extra"])["awards"] == {"c1": 3}
        assert json.loads(records[2]["meta"]) == {"contest": "IMO", "year": 2025}
    else:
        table = pq.read_table(path)
        assert table.column_names == [f.name for f in FIELDS]
        assert str(table.schema.field("meta").type) == "struct<contest: string, year: int64>"
        assert table.column("score").to_pylist()[:2] == [7.0, 0.5]
        assert json.loads(table.column("extra")[3].as_py())["awards"] == {"c1": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_parquet_row_groups_are_bounded(tmp_path):
    path = tmp_path / "data.parquet"
    write_rows(rows=rows(25), fields=FIELDS, file_type="parquet", path=path, row_group_size=10)
    meta = pq.ParquetFile(path).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [10, 10, 5]


def test_parquet_string_columns_hold_the_texts_as_given(tmp_path, monkeypatch):
    """Plain string columns go to Arrow as buffers, not JSON: missing values, non-ASCII text,
    quotes and newlines, row groups closed by size, all read back as they were given; a value
    that is not a string is refused, naming its column."""
    import exports.writers as writers

    texts = [None, "", 'a "quoted"\nline', "café ∀x∈ℝ", "z" * 3000, "😀 \\ \t"] * 5
    fields = [Field("text", "string", ""), Field("n", "int", ""), Field("note", "string", "")]
    given = [{"text": t, "n": i, "note": None if i % 4 else f"n{i}"} for i, t in enumerate(texts)]
    monkeypatch.setattr(writers, "ROW_GROUP_BYTES", 4000)  # 15 KB of text: groups close by size
    path = tmp_path / "texts.parquet"
    write_rows(rows=iter(given), fields=fields, file_type="parquet", path=path)
    assert pq.read_table(path).to_pylist() == given
    assert pq.ParquetFile(path).metadata.num_row_groups == 3

    with pytest.raises(ValueError, match="column note: int in a string column"):
        write_rows(
            rows=iter([{"text": "x", "n": 1, "note": 5}]),
            fields=fields,
            file_type="parquet",
            path=tmp_path / "bad.parquet",
        )
    assert not (tmp_path / "bad.parquet").exists()


@pytest.mark.parametrize("file_type", ["jsonl", "csv", "parquet"])
def test_a_failure_midway_leaves_no_file(tmp_path, file_type):
    def broken():
        yield from rows(3)
        raise RuntimeError("database went away")

    path = tmp_path / f"data.{file_type}"
    with pytest.raises(RuntimeError, match="went away"):
        write_rows(rows=broken(), fields=FIELDS, file_type=file_type, path=path)
    assert list(tmp_path.iterdir()) == []


def test_a_row_group_arrow_refuses_stops_the_parquet_export_and_leaves_no_file(tmp_path):
    """Row groups are parsed and written in a thread of their own: its failure still reaches the
    caller, rows after it are not written, and no file is left."""
    import pyarrow as pa

    def bad_count_in_the_second_group():
        for row in rows(30):
            yield {**row, "count": "not a number"} if row["count"] == 12 else row

    path = tmp_path / "data.parquet"
    with pytest.raises(pa.ArrowInvalid):
        write_rows(
            rows=bad_count_in_the_second_group(),
            fields=FIELDS,
            file_type="parquet",
            path=path,
            row_group_size=10,
        )
    assert list(tmp_path.iterdir()) == []


def test_unknown_file_type(tmp_path):
    with pytest.raises(ValueError, match="unknown file type 'xlsx'"):
        write_rows(rows=rows(1), fields=FIELDS, file_type="xlsx", path=tmp_path / "x")


def test_card_lists_columns_conversions_and_checksums():
    manifest = {
        "schema_version": 1,
        "created_at": "2026-01-01T00:00:00Z",
        "scale": "0-7",
        "files": {"data.jsonl": {"rows": 3, "size": 10, "sha256": "ab" * 32}},
        "counts": {"rows": 3, "problems": 2},
        "filters": {"campaign": "pilot", "contest": ""},
        "conversions": [{"description": "0-7 -> {0, 0.5, 1}: 7 -> 1, 5-6 -> 0.5, 0-4 -> 0"}],
        "licences": ["CC-BY-4.0"],
    }
    card = render_card(
        title="Pilot", summary="Rows.", fields=FIELDS, manifest=manifest, sample={"id": "r0"}
    )
    assert "| `meta` | struct{contest: string, year: int} |" in card
    assert "- campaign: pilot" in card and "- contest:" not in card
    assert "Converted: 0-7 -> {0, 0.5, 1}" in card
    assert "sha256 `" + "ab" * 32 in card
    assert '"id": "r0"' in card


@pytest.mark.parametrize("file_type", ["csv", "jsonl"])
def test_csv_neutralises_formula_cells_and_jsonl_keeps_text_exact(tmp_path, file_type):
    texts = ['=HYPERLINK("x")', "+1", "-2", "@SUM(A1)", "\tx", "\rx", "plain", "a=b"]
    fields = [Field("id", "string", "row id"), Field("count", "int", "a count")]
    path = tmp_path / f"data.{file_type}"
    write_rows(
        rows=({"id": text, "count": -3} for text in texts),
        fields=fields, file_type=file_type, path=path, on_progress=lambda n: None,
    )  # fmt: skip
    if file_type == "csv":
        records = list(csv.DictReader(path.open(newline="")))
        assert [r["id"] for r in records] == ["'" + t for t in texts[:6]] + texts[6:]
        assert records[0]["count"] == "-3"
    else:
        assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == texts
