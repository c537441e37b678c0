"""A table of bad inputs: each gets a message naming the file, the line and the field, and fails
alone: every good record of the file is imported (a file that cannot be read at all writes
nothing)."""

import json

import pytest

from problems.models import Problem, Proof, ReferenceSolution, VerifierAnalysis
from problems.services import corpus_import
from tests.problems.import_files import generic_problem, generic_proof, proofbench_row

pytestmark = pytest.mark.django_db

GOOD = json.dumps(proofbench_row(1)) + "\n"


def jsonl(*rows: dict) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


CASES = [
    # id, file name, content, format, (line, field, words in the message)
    ("empty file", "empty.jsonl", b"", None, (None, "", "empty")),
    ("blank lines only", "blank.jsonl", b"\n\n  \n", "proofbench", (None, "", "empty")),
    (
        "latin-1 bytes",
        "latin1.jsonl",
        GOOD.encode() + '{"problem_id": "T-2", "problem": "caf\xe9"}\n'.encode("latin-1"),
        None,
        (2, "problem", "byte 0xe9 at character 4, which is not UTF-8"),
    ),
    (
        "latin-1 csv",
        "latin1.csv",
        "problem_id,problem\nT-1,ok\nT-2,caf\xe9\n".encode("latin-1"),
        None,
        (3, "problem", "byte 0xe9 at character 4, which is not UTF-8"),
    ),
    (
        "utf-16 file",
        "wide.csv",
        "Problem ID,Problem\nX,y\n".encode("utf-16"),
        None,
        (None, "", "UTF-16"),
    ),
    (
        "missing problem_id",
        "rows.jsonl",
        GOOD.encode() + jsonl({"problem": "A statement"}),
        None,
        (2, "problem_id", "missing (required)"),
    ),
    (
        "missing statement",
        "rows.jsonl",
        GOOD.encode() + jsonl({"problem_id": "T-9", "problem": "  "}),
        "proofbench",
        (2, "problem", "missing (required)"),
    ),
    (
        "bad JSON",
        "rows.jsonl",
        GOOD.encode() + b'{"problem_id": "T-3", "problem": \n',
        None,
        (2, "", "Not valid JSON"),
    ),
    (
        "rating out of range",
        "rows.jsonl",
        GOOD.encode() + jsonl(proofbench_row(2, expert_rating=9)),
        None,
        (2, "expert_rating", "outside 0-7"),
    ),
    (
        "rating not a number",
        "rows.jsonl",
        GOOD.encode() + jsonl(proofbench_row(2, expert_rating="seven")),
        None,
        (2, "expert_rating", "not a number"),
    ),
    (
        "year not a number",
        "rows.jsonl",
        GOOD.encode() + jsonl(proofbench_row(2, metadata={"contest_year": "MMXXIV"})),
        None,
        (2, "metadata.contest_year", "not a whole number"),
    ),
    (
        "huge cell",
        "rows.jsonl",
        GOOD.encode() + jsonl(proofbench_row(2, model_solution="x" * 5000)),
        None,
        (2, "model_solution", "over the limit of 4,000"),
    ),
    (
        "huge csv cell",
        "rows.csv",
        ("problem_id,problem\nT-1,ok\nT-2," + "y" * 5000 + "\n").encode(),
        None,
        (3, "", "over the limit of 4,000"),
    ),
    (
        "csv record with too many cells",
        "rows.csv",
        b"problem_id,problem\nT-1,ok\nT-2,ok,extra\n",
        None,
        (3, "", "3 cells but the header has 2"),
    ),
    (
        "key too long",
        "rows.jsonl",
        GOOD.encode() + jsonl(proofbench_row(2, generator="g" * 201)),
        None,
        (2, "generator", "longer than 200"),
    ),
    (
        "unknown problem in our format",
        "corpus.jsonl",
        jsonl(generic_problem(), generic_proof(problem="NOPE")),
        None,
        (2, "problem", "no problem 'NOPE'"),
    ),
    (
        "analysis of a missing proof",
        "corpus.jsonl",
        jsonl(
            generic_problem(),
            {
                "kind": "analysis",
                "problem": "G-1",
                "generator": "nobody",
                "verifier": "v",
                "text": "x",
            },
        ),
        None,
        (2, "proof_sample", "no proof by 'nobody'"),
    ),
    (
        "unknown kind",
        "corpus.jsonl",
        jsonl(generic_problem(), {"kind": "grade"}),
        "jsonl",
        (2, "kind", "not one of problem, proof, analysis"),
    ),
    (
        "bad topic",
        "corpus.jsonl",
        jsonl(generic_problem(topic="Z")),
        None,
        (1, "topic", "not A, C, G or N"),
    ),
    (
        "bad scheme format",
        "corpus.jsonl",
        jsonl(generic_problem(schemes=[{"format": "docx", "content": "x"}])),
        None,
        (1, "schemes[0]", "format must be one of"),
    ),
    (
        "rating above its max",
        "corpus.jsonl",
        jsonl(generic_problem(), generic_proof(ratings=[{"value": 3, "max": 1}])),
        None,
        (2, "ratings[0].value", "outside 0-1"),
    ),
    (
        "line that is not an object",
        "rows.jsonl",
        GOOD.encode() + b"[1, 2]\n",
        "proofbench",
        (2, "", "not a JSON object"),
    ),
    ("unknown shape", "rows.jsonl", b'{"a": 1}\n', None, (None, "", "Cannot tell the format")),
    ("unknown suffix", "notes.txt", b"hello\n", None, (None, "", "Cannot tell the format")),
    (
        "deepseek rating above 21",
        "cmo.jsonl",
        jsonl(
            {
                "problem_idx": "CMO2024-1",
                "question": "Q",
                "model_prediction": {"proof": "P", "human_rating": 22},
            }
        ),
        None,
        (1, "model_prediction.human_rating", "outside 0-21"),
    ),
    (
        "opc label neither correct nor incorrect",
        "opc.jsonl",
        jsonl(
            {
                "problem_id": "O-1",
                "model_id": "m",
                "reward_model": {"ground_truth": "maybe"},
                "prompt": [{"content": "### Problem Statement:\nQ\n### Model Solution:\nP"}],
            }
        ),
        None,
        (1, "reward_model.ground_truth", "'maybe'"),
    ),
]


# The cases whose file holds no good record: nothing is written.
NO_GOOD_RECORD = {
    "empty file",
    "blank lines only",
    "utf-16 file",
    "bad topic",
    "bad scheme format",
    "unknown shape",
    "unknown suffix",
    "deepseek rating above 21",
    "opc label neither correct nor incorrect",
}


@pytest.mark.parametrize(
    ("case", "name", "content", "fmt", "expected"),
    CASES,
    ids=[case[0] for case in CASES],
)
def test_bad_input_is_named_and_fails_alone(tmp_path, settings, case, name, content, fmt, expected):
    settings.PROOFMARK_IMPORT_MAX_CELL_CHARS = 4000
    path = tmp_path / name
    path.write_bytes(content)
    report = corpus_import(path=path, fmt=fmt)
    line, field, words = expected
    assert not report.ok
    errors = [issue for issue in report.issues if issue["level"] == "error"]
    assert any(
        issue["file"] == name
        and (line is None or issue["line"] == line)
        and issue["field"] == field
        and words in issue["message"]
        for issue in errors
    ), errors
    if case in NO_GOOD_RECORD:
        assert report.lines()[-1] == f"{report.errors} error(s): nothing was written."
        assert Problem.objects.count() == 0
    else:  # the good record before the bad one is imported
        assert report.lines()[-1].endswith("were not imported; every other record was.")
        assert Problem.objects.count() == 1
    assert VerifierAnalysis.objects.count() == 0


def test_every_error_of_a_file_is_listed_and_the_good_rows_are_imported(tmp_path):
    rows = [
        proofbench_row(1),
        {"problem": "x"},
        proofbench_row(3, expert_rating=8),
        {"problem_id": "Y"},
        proofbench_row(5),
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = corpus_import(path=path)
    assert [(issue["line"], issue["field"]) for issue in report.issues] == [
        (2, "problem_id"),
        (3, "expert_rating"),
        (4, "problem"),
    ]
    assert sorted(Problem.objects.values_list("external_id", flat=True)) == ["T-001", "T-005"]
    # a row fails as a whole: row 3's problem, reference and proof are all left out
    assert Proof.objects.count() == ReferenceSolution.objects.count() == 2


def test_a_bad_record_after_many_good_batches_fails_alone(tmp_path):
    rows = [proofbench_row(index) for index in range(25)] + [{"problem": "no id"}]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = corpus_import(path=path, batch_size=5)
    assert report.errors == 1 and report.committed
    assert report.issues[0]["line"] == 26
    assert Problem.objects.count() == Proof.objects.count() == 25
