"""Parsers with limits: a YAML alias bomb is refused with its line, not expanded; a record's
metadata over the bound fails alone, naming its file, line and field."""

import json

import pytest

from problems.importers.base import METADATA_MAX_BYTES
from problems.models import Problem, Proof
from problems.services import corpus_import
from tests.problems.import_files import generic_problem, generic_proof

pytestmark = pytest.mark.django_db

BOMB = """date: 2025-03-20
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
"""


def matharena_folder(root, config: str):
    folder = root / "usamo_2025"
    (folder / "problems").mkdir(parents=True)
    (folder / "problems" / "1.tex").write_text("Prove that $1 + 1 = 2$.")
    (folder / "grading_scheme.json").write_text(
        json.dumps([{"id": "1", "points": 7, "scheme": [{"title": "All", "points": 7}]}])
    )
    (folder / "config.yaml").write_text(config)
    return folder


def test_a_yaml_alias_bomb_is_refused_with_its_line_and_nothing_expanded(tmp_path):
    report = corpus_import(path=matharena_folder(tmp_path, BOMB), fmt="matharena")
    errors = [issue for issue in report.issues if issue["level"] == "error"]
    assert [(e["file"], e["line"]) for e in errors] == [("usamo_2025/config.yaml", 3)]
    assert "alias (*a) is not accepted" in errors[0]["message"]
    problem = Problem.objects.get(external_id="USAMO-2025-P1")  # the statement still imports
    assert len(json.dumps(problem.metadata)) < 1000


def test_a_plain_config_still_imports_its_fields(tmp_path):
    corpus_import(path=matharena_folder(tmp_path, "date: 2025-03-20\nn_problems: 1\n"))
    assert Problem.objects.get(external_id="USAMO-2025-P1").metadata["n_problems"] == 1


def test_a_record_whose_metadata_is_over_the_bound_fails_alone(tmp_path):
    big = generic_proof(problem="P-1", sample="1", metadata={"blob": "x" * METADATA_MAX_BYTES})
    lines = [generic_problem(external_id="P-1"), big, generic_proof(problem="P-1")]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    report = corpus_import(path=path)
    errors = [issue for issue in report.issues if issue["level"] == "error"]
    assert [(e["file"], e["line"], e["field"]) for e in errors] == [("corpus.jsonl", 2, "metadata")]
    assert "over the 65,536" in errors[0]["message"]
    assert Proof.objects.filter(problem__external_id="P-1").count() == 1
