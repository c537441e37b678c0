"""Every export pairs each proof with the statement it was rated against, after an import
changed the problem's statement under it."""

import json

import pytest

from exports.formats import ExportOptions
from exports.services import dataset_write
from problems.models import Problem
from problems.services import corpus_import
from tests.exports.factories import labelled_campaign
from tests.problems.import_files import write_jsonl

pytestmark = pytest.mark.django_db

OLD = "Prove that $a^2 + b^2 \\ge 2ab$ for all reals $a, b$."
NEW = "Prove that $a^2 + b^2 \\ge 2ab$ for all real numbers $a$ and $b$."


def rows(corpus, fmt, tmp_path):
    out = tmp_path / f"{fmt}.jsonl"
    dataset_write(
        campaign=corpus.campaign,
        fmt=fmt,
        file_type="jsonl",
        options=ExportOptions.from_dict({}),
        out=out,
    )
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_exports_keep_the_statement_the_proofs_were_rated_against(tmp_path):
    corpus = labelled_campaign()
    record = {"kind": "problem", "id": "GOLDEN-PILOT-1", "statement": NEW}
    report = corpus_import(path=write_jsonl(tmp_path / "new.jsonl", [record]), fmt="jsonl")
    [warning] = [i["message"] for i in report.issues if i["level"] == "warning"]
    assert warning.startswith("problem GOLDEN-PILOT-1: the statement differs")
    assert "its 2 proof(s)" in warning
    problem = Problem.objects.get(external_id="GOLDEN-PILOT-1")
    assert (problem.statement, problem.statement_version) == (NEW, 2)

    for fmt in ("proofbench", "dv"):
        found = {
            (r["problem_id"], r["problem"], r["statement_version"])
            for r in rows(corpus, fmt, tmp_path)
        }
        assert found == {
            ("GOLDEN-PILOT-1", OLD, 1),
            ("GOLDEN-PILOT-2", "Show that $n^3 - n$ is divisible by $6$.", 1),
        }, fmt
    versions = {
        (r["problem_id"], r["statement_version"]) for r in rows(corpus, "annotations", tmp_path)
    }
    assert versions == {("GOLDEN-PILOT-1", 1), ("GOLDEN-PILOT-2", 1)}
    judged = {
        (r["problem_id"], r["statement_version"]) for r in rows(corpus, "judgements", tmp_path)
    }
    assert judged == {("GOLDEN-PILOT-1", 1), ("GOLDEN-PILOT-2", 1)}
