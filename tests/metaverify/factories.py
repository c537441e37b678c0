"""Factories for analysis review: a campaign on 0 / 0.5 / 1 with analysis items."""

from annotation.models import Item
from tests.annotation.factories import CampaignFactory, expert_in
from tests.problems.page_factories import ProofFactory, VerifierAnalysisFactory

PROOF_TEXT = (
    "Let $x > 0$. Step 1: we have $x^2 \\ge 0$.\n\n"
    "Step 2: dividing by $x$ gives the claim.\n\nStep 3: hence the bound holds for every $n$."
)
ANALYSIS_TEXT = (
    "Here is my evaluation of the solution:\n\n"
    "Step 1 is correct.\n\n"
    "Step 2 divides by x without checking that x is nonzero.\n\n"
    "Step 3 claims the bound for every n but only proves it for even n.\n\n"
    "Based on my evaluation, the final overall score should be:\n\\boxed{0.5}"
)


def review_campaign(**fields):
    fields.setdefault("task_kind", "analysis_review")
    fields.setdefault("scale", "0-0.5-1")
    return CampaignFactory(**fields)


def analysis_item(campaign=None, *, required_judgements=1, **analysis_fields):
    campaign = campaign or review_campaign()
    proof = ProofFactory(text=PROOF_TEXT)
    analysis_fields.setdefault("text", ANALYSIS_TEXT)
    analysis_fields.setdefault("score", "0.5")
    analysis = VerifierAnalysisFactory(proof=proof, **analysis_fields)
    return Item.objects.create(
        campaign=campaign, proof=proof, analysis=analysis, required_judgements=required_judgements
    )


def defect(text: str, quote: str, **judgement) -> dict:
    start = text.index(quote)
    return {"start": start, "end": start + len(quote), "quote": quote, **judgement}


__all__ = ["analysis_item", "defect", "expert_in", "review_campaign"]
