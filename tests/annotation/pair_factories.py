"""A pairwise campaign with a problem's proofs by several generators, and its experts."""

from annotation.models import TaskKind
from annotation.services.pairs import pairs_create
from tests.annotation.factories import CampaignFactory, expert_in
from tests.problems.page_factories import ProblemFactory, ProofFactory


def pairwise_campaign(generators=("model-a", "model-b", "model-c"), problems=1, experts=2, **kw):
    """A pairwise campaign with one proof per generator of each problem, every pair of them
    made, and `experts` experts. Returns (campaign, proofs by (problem index, generator),
    experts)."""
    campaign = CampaignFactory(task_kind=TaskKind.PAIRWISE, **kw)
    proofs = {}
    for n in range(problems):
        problem = ProblemFactory()
        for k, generator in enumerate(generators):
            proofs[n, generator] = ProofFactory(
                problem=problem, generator=generator, text=f"Proof of {n} by way number w{k}x."
            )
    pairs_create(campaign=campaign, proof_ids=[p.pk for p in proofs.values()])
    people = [expert_in(campaign, f"pairs-expert-{campaign.pk}-{k}") for k in range(experts)]
    return campaign, proofs, people
