"""A campaign for the design-space grid: four problems of two types, three proofs each by three
model families, every proof scored by three experts, the middle proof of each problem marked
incomplete (a "skipped steps" span); and a fake model whose answers depend on the prompt's
context and instruction, so that the ranking of the cells is known in advance."""

from dataclasses import dataclass, field
from decimal import Decimal

from annotation.models import Campaign, ErrorSpan, Item
from tests.annotation.factories import approved_scheme
from tests.exports.factories import grade, label, proof
from tests.factories import UserFactory
from tests.llm.fake_openai import text, truncated
from tests.problems.page_factories import ProblemFactory, ReferenceSolutionFactory, sha256

GENERATORS = ("gpt-4o", "gemini-2.5-pro", "deepseek-prover")
# final labels of the three proofs of each problem (the middle one incomplete)
LABELS = ((7, 3, 1), (6, 3, 0), (7, 4, 2), (5, 2, 0))
# expert C scores the first proof of each problem a point higher (capped), expert B the last a
# point lower (floored); expert A gives the label
STRICT_OFFSETS = {
    "both": (0, 0, 0),
    "scheme": (1, 0, 0),
    "reference": (1, 1, 0),
    "none": (-2, -2, -2),
}


@dataclass
class GridCorpus:
    campaign: Campaign
    items: list[Item] = field(default_factory=list)
    labels: dict[int, int] = field(default_factory=dict)  # item id -> label
    needles: dict[int, str] = field(default_factory=dict)  # item id -> its proof's needle


def clamp(value: int) -> int:
    return max(0, min(7, value))


def grid_campaign(slug: str = "grid") -> GridCorpus:
    owner = UserFactory(username=f"{slug}-owner", roles=["admin"])
    campaign = Campaign.objects.create(slug=slug, name="Grid campaign", created_by=owner)
    experts = [UserFactory(username=f"{slug}-{n}", roles=["expert"]) for n in "abc"]
    corpus = GridCorpus(campaign=campaign)
    for p, labels in enumerate(LABELS):
        problem = ProblemFactory(
            external_id=f"{slug.upper()}-{p + 1}",
            topic="A" if p < 2 else "N",
            statement=f"Problem {p + 1}: show that statement {p + 1} holds.",
        )
        ReferenceSolutionFactory(
            problem=problem, text=f"Reference route {p + 1}.", text_hash=sha256(f"{slug}r{p}")
        )
        scheme = approved_scheme(problem)
        for g, value in enumerate(labels):
            needle = f"Proof {p + 1}.{g + 1}:"
            body = needle + " we argue" + " carefully" * (5 + 30 * g + 7 * p) + "."
            made = proof(problem, GENERATORS[g], g, body)
            item = Item.objects.create(campaign=campaign, proof=made, scheme=scheme)
            scores = [
                value,
                max(0, value - 1) if g == 2 else value,
                min(7, value + 1) if g == 0 else value,
            ]
            grades = [grade(item, expert, s) for expert, s in zip(experts, scores, strict=True)]
            if g == 1:
                ErrorSpan.objects.create(
                    grade=grades[0], start=0, end=5, quote=body[:5], category="skipped_steps"
                )
            label(item, Decimal(value), "agreement", grades)
            corpus.items.append(item)
            corpus.labels[item.pk] = value
            corpus.needles[item.pk] = needle
    return corpus


def reply(score: int):
    return text(
        f"<assessment>Counted the steps.</assessment><errors>none</errors><score>{score}</score>"
    )


def offset(context: str, instruction: str, g: int) -> int:
    """The fake grader's error: strict grading errs by STRICT_OFFSETS; flexible grading as
    well, and over-credits the incomplete proof by 2; flexible without any context is lenient by
    3 everywhere."""
    if instruction == "flexible" and context == "none":
        return 3
    extra = 2 if instruction == "flexible" and g == 1 else 0
    return STRICT_OFFSETS[context][g] + extra


def script_grader(fake_llm, corpus: GridCorpus, *, truncate: str | None = None) -> None:
    """Rules for every (instruction, context, proof): the most specific context first (the
    server answers with the first rule whose needles all occur). `truncate` (a proof's needle)
    cuts the first reply of the strict, both-contexts cell for that proof at the token limit.
    The flexible, both-contexts cell answers its two runs one point either side of its value."""
    for instruction in ("strict", "flexible"):
        head = f"({instruction} grading)"
        for context, needles in (
            ("both", ("## Reference solution", "## Marking scheme")),
            ("reference", ("## Reference solution",)),
            ("scheme", ("## Marking scheme",)),
            ("none", ()),
        ):
            for item in corpus.items:
                g = item.proof.sample_index
                value = clamp(corpus.labels[item.pk] + offset(context, instruction, g))
                needle = corpus.needles[item.pk]
                replies = [reply(value)]
                if context == "both" and instruction == "flexible":
                    replies = [reply(clamp(value + 1)), reply(clamp(value - 1))]
                if truncate == needle and context == "both" and instruction == "strict":
                    replies = [truncated(reply(value).text), reply(value)]
                fake_llm.on((head, *needles, needle), *replies)
