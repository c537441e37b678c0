"""A small labelled corpus with fixed texts (the golden files depend on them)."""

from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal

from adjudication.models import FinalLabel
from adjudication.services.labels import final_label_set
from annotation.models import Campaign, ErrorSpan, Grade, GradeRevision, Item
from graders.models import GraderEvaluation, GraderPrediction
from tests.annotation.factories import CampaignFactory, ItemFactory, approved_scheme
from tests.factories import UserFactory
from tests.problems.page_factories import (
    ProblemFactory,
    ProofFactory,
    ReferenceSolutionFactory,
    VerifierAnalysisFactory,
    sha256,
)

SUBMITTED = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def proof(problem, generator: str, index: int, text: str, **meta):
    return ProofFactory(
        problem=problem,
        generator=generator,
        sample_key=str(index),
        sample_index=index,
        text=text,
        text_hash=sha256(text),
        metadata=meta,
    )


def grade(item, expert, score, **extra) -> Grade:
    return Grade.objects.create(
        item=item,
        expert=expert,
        status="submitted",
        score=Decimal(str(score)),
        submitted_at=SUBMITTED,
        scheme=item.scheme,
        seconds_spent=extra.pop("seconds_spent", 300),
        **extra,
    )


def label(item, value, source, grades, scale="0-7") -> FinalLabel:
    return FinalLabel.objects.create(
        item=item,
        value=Decimal(str(value)),
        scale=scale,
        source=source,
        policy="tests",
        scheme=item.scheme,
        grade_ids=[g.pk for g in grades],
    )


@dataclass
class Corpus:
    campaign: Campaign
    items: list[Item] = field(default_factory=list)
    experts: list = field(default_factory=list)


def labelled_campaign(slug: str = "golden-pilot", scale: str = "0-7") -> Corpus:
    """Two problems, three graded proofs (one double-scored), each with a final label."""
    owner = UserFactory(username=f"{slug}-owner", roles=["admin"])
    campaign = Campaign.objects.create(
        slug=slug, name="Golden pilot", scale=scale, created_by=owner
    )
    ann = UserFactory(username=f"{slug}-ann", roles=["expert"])
    bob = UserFactory(username=f"{slug}-bob", roles=["expert"])
    p1 = ProblemFactory(
        external_id=f"{slug.upper()}-1",
        contest="Test Olympiad",
        year=2024,
        statement="Prove that $a^2 + b^2 \\ge 2ab$ for all reals $a, b$.",
        metadata={"licence": "CC-BY-4.0"},
    )
    p2 = ProblemFactory(
        external_id=f"{slug.upper()}-2",
        contest="Other Cup",
        year=2025,
        statement="Show that $n^3 - n$ is divisible by $6$.",
    )
    ReferenceSolutionFactory(problem=p1, text="$(a-b)^2 \\ge 0$.", text_hash=sha256("r1"))
    ReferenceSolutionFactory(problem=p2, text="Three consecutive integers.", text_hash=sha256("r2"))
    s1, s2 = approved_scheme(p1), approved_scheme(p2)
    proofs = [
        proof(p1, "model-a", 0, "Expand $(a-b)^2$.", generation_prompt="Prove it."),
        proof(p1, "model-b", 0, "By AM-GM, $a^2+b^2 \\ge 2|ab|$.", licence="MIT"),
        proof(p2, "model-a", 0, "$n^3-n=(n-1)n(n+1)$, so 2 and 3 divide it."),
    ]
    items = [
        Item.objects.create(campaign=campaign, proof=proofs[0], scheme=s1, required_judgements=2),
        Item.objects.create(campaign=campaign, proof=proofs[1], scheme=s1),
        Item.objects.create(campaign=campaign, proof=proofs[2], scheme=s2),
    ]
    g1 = grade(
        items[0],
        ann,
        6 if scale == "0-7" else 4,
        awards={"A1": 2, "A2": 3, "A3": 1},
        comment="Equality case thin.",
        step_verdicts={"1": "CORRECT", "2": "CORRECT"},
    )
    g2 = grade(items[0], bob, 5 if scale == "0-7" else 3, deductions=["D1"])
    ErrorSpan.objects.create(
        grade=g2, start=0, end=6, quote="Expand", category="skipped_steps", note="terse"
    )
    GradeRevision.objects.create(grade=g2, changed_by=bob, old={"score": "4"}, new={"score": "5"})
    g3 = grade(items[1], ann, 2 if scale == "0-7" else 1, first_wrong_step=1)
    g4 = grade(items[2], bob, 7 if scale == "0-7" else 4)
    label(items[0], 5 if scale == "0-7" else 3, "agreement", [g1, g2], scale)
    label(items[1], 2 if scale == "0-7" else 1, "adjudication", [g3], scale)
    label(items[2], 7 if scale == "0-7" else 4, "single", [g4], scale)
    return Corpus(campaign=campaign, items=items, experts=[ann, bob])


def reviewed_campaign(slug: str = "golden-review") -> Corpus:
    """An analysis-review campaign on 0 / 0.5 / 1: two analyses with expert meta scores."""
    owner = UserFactory(username=f"{slug}-owner", roles=["admin"])
    campaign = Campaign.objects.create(
        slug=slug,
        name="Golden review",
        scale="0-0.5-1",
        task_kind="analysis_review",
        created_by=owner,
    )
    expert = UserFactory(username=f"{slug}-ann", roles=["expert"])
    problem = ProblemFactory(
        external_id=f"{slug.upper()}-1",
        contest="Test Olympiad",
        year=2025,
        statement="Prove there are infinitely many primes.",
    )
    the_proof = proof(problem, "model-a", 0, "Suppose finitely many; multiply and add one.")
    items = []
    for index, (score, meta) in enumerate([(Decimal("1"), "1"), (None, "0.5")]):
        analysis = VerifierAnalysisFactory(
            proof=the_proof,
            verifier="verifier-v",
            sample_key=str(index),
            text=f"Analysis {index}: the argument is Euclid's.",
            text_hash=sha256(f"analysis {index}"),
            score=score,
        )
        item = Item.objects.create(campaign=campaign, proof=the_proof, analysis=analysis)
        g = grade(item, expert, meta)
        label(item, meta, "single", [g], "0-0.5-1")
        items.append(item)
    return Corpus(campaign=campaign, items=items, experts=[expert])


def graded_by_experts_and_graders():
    """A 0 / 0.5 / 1 campaign of 40 proofs, half right (1) and half wrong (0), by two
    generators. An expert labelled the first 24. A verifier is confidently wrong: four
    unanimous analyses of 1 on every proof. A grader is right on 36 of the 40."""
    campaign = CampaignFactory(scale="0-0.5-1", double_share=Decimal("0"))
    expert = UserFactory(username="expert-a", roles=["expert"])
    evaluation = GraderEvaluation.objects.create(
        campaign=campaign, name="good grader", source="jsonl", prediction_scale="0-1"
    )
    campaign.truth = {}
    for n in range(40):
        proof = ProofFactory(generator="model-a" if n % 2 else "model-b")
        item = ItemFactory(campaign=campaign, proof=proof)
        truth = Decimal(1 if n % 4 < 2 else 0)
        campaign.truth[item.pk] = truth
        for sample in range(4):
            VerifierAnalysisFactory(
                proof=proof, verifier="overconfident", sample_key=str(sample), score=Decimal(1)
            )
        said = truth if n >= 4 else 1 - truth
        GraderPrediction.objects.create(evaluation=evaluation, item=item, score=float(said))
        if n < 24:
            g = grade(item, expert, truth)
            final_label_set(
                item=item,
                value=truth,
                source="adjudication" if n < 6 else "single",
                policy="tests",
                grade_ids=[g.pk],
            )
    return campaign
