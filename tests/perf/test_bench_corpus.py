"""The benchmarks' own corpus (benchmarks/corpus.py) keeps the ProofBench import contract: what
`make bench` imports is what a user's file of that format would be."""

import sys
from pathlib import Path

import pytest

from problems.models import Problem, Proof
from problems.services import corpus_import

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from corpus import corpus_file  # noqa: E402


@pytest.mark.django_db
def test_generated_corpus_imports_as_proofbench_with_varied_lengths(tmp_path):
    path = corpus_file(60, folder=tmp_path, seed=3)
    assert corpus_file(60, folder=tmp_path, seed=3).read_bytes() == path.read_bytes()
    report = corpus_import(path=path, fmt="proofbench")
    assert report.ok, report
    assert Proof.objects.count() == 60
    assert 15 <= Problem.objects.count() < 60  # one to four proofs a problem
    lengths = sorted(len(text) for text in Proof.objects.values_list("text", flat=True))
    assert lengths[0] < 2000 and lengths[-1] > 6000
