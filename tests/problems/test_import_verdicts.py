"""Imported verifier analyses get a score only from a whole verdict (issue 34): the truncated and
doubled forms store no score, keep their raw text and say why; what reads the scores (the
second opinion, routing's uncertainty, label confidence's automatic raters) sees only the whole
verdict. Both databases."""

from decimal import Decimal

import pytest

from annotation.opinions import verifier_opinion
from estimation.routing.services import uncertainty_by_proof
from estimation.services.confidence import automatic_unit_values
from problems.models import Proof, VerifierAnalysis
from problems.services import corpus_import
from tests.annotation.factories import CampaignFactory, ItemFactory
from tests.problems.import_files import generic_problem, generic_proof, write_jsonl

pytestmark = pytest.mark.django_db

EVALUATION = (
    "Here is my evaluation of the solution:\n\n"
    "The proof ends with its own answer $\\boxed{1}$: the claim holds with equality at $a = b$.\n"
    "**Step 1.** Expanding $(a - b)^2 \\ge 0$ is correct.\n\n"
)
FINAL = "Based on my evaluation, the final overall score should be:"
FORMS = {
    "whole": f"{EVALUATION}{FINAL}\n\\boxed{{0.5}}",
    "cut-in-box": f"{EVALUATION}{FINAL}\n\\boxed{{0",
    "cut-after-phrase": f"{EVALUATION}{FINAL}",
    "no-phrase": f"{EVALUATION}So the argument stands.",
    "two-boxes": f"{EVALUATION}{FINAL} \\boxed{{0}} or perhaps \\boxed{{1}}",
    "off-scale": f"{EVALUATION}{FINAL} \\boxed{{0.75}}",
}


def imported(tmp_path) -> Proof:
    analyses = [{"verifier": "dsm", "sample": key, "text": text} for key, text in FORMS.items()]
    path = write_jsonl(tmp_path / "v.jsonl", [generic_problem(), generic_proof(analyses=analyses)])
    report = corpus_import(path=path)
    assert report.ok and report.counts["analyses"]["created"] == len(FORMS), report.lines()
    return Proof.objects.get()


def test_only_the_whole_verdict_has_a_score_and_every_text_is_kept(tmp_path):
    imported(tmp_path)
    stored = {a.sample_key: a for a in VerifierAnalysis.objects.all()}
    assert {key: (a.score, a.kept_contract) for key, a in stored.items()} == {
        "whole": (Decimal("0.5"), True),
        **{key: (None, False) for key in FORMS if key != "whole"},
    }
    assert {key: a.text for key, a in stored.items()} == FORMS
    assert "never closed" in stored["cut-in-box"].score_problem
    assert "nothing is boxed after" in stored["cut-after-phrase"].score_problem
    assert "no final phrase" in stored["no-phrase"].score_problem
    assert "2 boxes" in stored["two-boxes"].score_problem
    assert "not 0, 0.5 or 1" in stored["off-scale"].score_problem


def test_what_reads_verifier_scores_sees_only_the_whole_verdict(tmp_path):
    proof = imported(tmp_path)
    campaign = CampaignFactory(scale="0-0.5-1", second_opinion="verifier")
    item = ItemFactory(campaign=campaign, proof=proof)
    opinion = verifier_opinion(item, "")
    assert opinion.score == Decimal("0.5") and "mean of 1 scored analysis" in opinion.origin
    assert uncertainty_by_proof([proof.pk])[proof.pk].verifier_scores == 1
    raters = automatic_unit_values(campaign, [proof.pk])[proof.pk]
    assert [(rater.kind, value) for rater, value in raters] == [("verifier", 0.5)]


def test_a_reimport_of_an_unchanged_text_changes_nothing(tmp_path):
    imported(tmp_path)
    again = corpus_import(path=tmp_path / "v.jsonl")
    assert again.counts["analyses"] == {"created": 0, "updated": 0, "unchanged": len(FORMS)}
