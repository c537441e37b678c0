"""The verdict-contract migrations (problems 0007-0008, adjudication 0009-0010): rows stored by
the lenient reading of before are re-read through today's parser, so that a row has a score
exactly when its text keeps the contract, and the database then holds that rule (both
databases)."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from adjudication.models import MetaVerification
from problems.models import VerifierAnalysis

BEFORE = [
    ("problems", "0006_rendered_text"),
    ("adjudication", "0008_rater_model_fit_to_estimation"),
]
EVALUATION = "Here is my evaluation of the solution:\nThe proof boxes its answer $\\boxed{1}$.\n"
FINAL = "Based on my evaluation, the final overall score should be:"
META = 'Here is my analysis of the "solution evaluation":\nIts defect is real.\n'
RATE = 'Based on my analysis, I will rate the "solution evaluation" as:'
# key: (text, score and flag as the lenient reading stored them, as they must be after)
ANALYSES = {
    "whole": (f"{EVALUATION}{FINAL} \\boxed{{1}}", ("1", True), ("1", True)),
    "cut-in-box": (f"{EVALUATION}{FINAL} \\boxed{{0", ("1", False), (None, False)),
    "cut-after-phrase": (f"{EVALUATION}{FINAL}", ("1", False), (None, False)),
    "no-phrase": (f"{EVALUATION}All good.", ("1", False), (None, False)),
    "two-boxes": (f"{EVALUATION}{FINAL} \\boxed{{0}} or \\boxed{{1}}", ("0", True), (None, False)),
    # a reply cut at the token limit that reads whole: the row had no score and gets none
    "length-stop": (f"{EVALUATION}{FINAL} \\boxed{{1}}", (None, False), (None, False)),
}


def _decimal(value):
    return None if value is None else Decimal(value)


def test_stored_verdicts_are_re_read_and_the_database_then_holds_the_rule(migrations):
    old = migrations.migrate(BEFORE).loader.project_state(BEFORE).apps
    problem = old.get_model("problems", "Problem").objects.create(external_id="M-1", statement="S")
    proof = old.get_model("problems", "Proof").objects.create(
        problem=problem, generator="g", sample_key="0", text="P", text_hash="h"
    )
    analyses = old.get_model("problems", "VerifierAnalysis")
    for key, (text, (score, kept), _) in ANALYSES.items():
        analyses.objects.create(
            proof=proof, verifier="v", sample_key=key, text=text, text_hash=key,
            score=_decimal(score), kept_contract=kept,
        )  # fmt: skip
    judged = analyses.objects.get(sample_key="whole")
    metas = old.get_model("adjudication", "MetaVerification")
    metas.objects.create(
        analysis=judged, verifier="m", sample_key="cut", text=f"{META}{RATE} \\boxed{{1",
        score=Decimal("1"), kept_contract=False,
    )  # fmt: skip
    metas.objects.create(
        analysis=judged, verifier="m", sample_key="whole", text=f"{META}{RATE} \\boxed{{0.5}}",
        score=Decimal("0.5"), kept_contract=True,
    )  # fmt: skip

    migrations.migrate()

    stored = {a.sample_key: a for a in VerifierAnalysis.objects.all()}
    for key, (_, _, (score, kept)) in ANALYSES.items():
        assert (stored[key].score, stored[key].kept_contract) == (_decimal(score), kept), key
    assert "never closed" in stored["cut-in-box"].score_problem
    assert "2 boxes" in stored["two-boxes"].score_problem
    assert {m.sample_key: (m.score, m.kept_contract) for m in MetaVerification.objects.all()} == {
        "cut": (None, False),
        "whole": (Decimal("0.5"), True),
    }
    for row in (
        {"score": Decimal("1"), "kept_contract": False},
        {"score": None, "kept_contract": True},
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            VerifierAnalysis.objects.filter(pk=stored["whole"].pk).update(**row)
        with pytest.raises(IntegrityError), transaction.atomic():
            MetaVerification.objects.filter(sample_key="whole").update(**row)
