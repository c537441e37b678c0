"""Corpus factories for the page, API and permission tests (the import tests have their own)."""

import hashlib
from decimal import Decimal

import factory

from problems.models import Problem, Proof, ReferenceSolution, VerifierAnalysis


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class ProblemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Problem

    external_id = factory.Sequence(lambda n: f"TEST-{n:04d}")
    contest = "Test Olympiad"
    year = 2024
    number = factory.Sequence(lambda n: str(n % 6 + 1))
    topic = "A"
    statement = factory.Sequence(
        lambda n: f"Prove that $x_{{{n}}}^2 \\ge 0$ for every real $x_{{{n}}}$."
    )
    source = "tests"


class ReferenceSolutionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ReferenceSolution

    problem = factory.SubFactory(ProblemFactory)
    text = factory.Sequence(lambda n: f"Squares are nonnegative: \\(x^2 = |x|^2 \\ge 0\\). ({n})")
    text_hash = factory.LazyAttribute(lambda o: sha256(o.text))
    source = "tests"


class ProofFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Proof

    problem = factory.SubFactory(ProblemFactory)
    generator = "model-a"
    sample_key = factory.Sequence(str)
    sample_index = factory.Sequence(int)
    text = factory.Sequence(
        lambda n: f"Proof {n}. Since $x^2 = x\\cdot x$ we have\n\n$$x^2 \\ge 0.$$"
    )
    text_hash = factory.LazyAttribute(lambda o: sha256(o.text))
    source = "tests"
    metadata = factory.LazyFunction(
        lambda: {"ratings": [{"kind": "human", "value": 6, "max": 7, "source": "tests"}]}
    )


class VerifierAnalysisFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = VerifierAnalysis

    proof = factory.SubFactory(ProofFactory)
    verifier = "verifier-v"
    sample_key = factory.Sequence(str)
    text = (
        "Here is my evaluation of the solution:\n\nAll steps hold.\n\n"
        "Based on my evaluation, the final overall score should be: \\boxed{1}"
    )
    text_hash = factory.LazyAttribute(lambda o: sha256(o.text))
    score = Decimal("1")
    kept_contract = factory.LazyAttribute(lambda o: o.score is not None)
    source = "tests"


def proofs_copied(*, count: int, generator: str, prefix: str, problems: int = 7) -> list:
    """`count` proofs of `generator` over `problems` problems (external ids `<prefix>-n`), the
    first with an approved scheme, written by binary COPY 100,000 at a time (no factory, no
    model instance a proof: a million in seconds); returns the problems."""
    from django.utils import timezone

    from problems.services.bulk import insert_rows
    from tests.annotation.factories import approved_scheme

    made = Problem.objects.bulk_create(
        Problem(
            external_id=f"{prefix}-{n}",
            contest=f"{prefix} Olympiad",
            year=2025,
            number=str(n + 1),
            statement=f"Problem {n}.",
            source="tests",
        )
        for n in range(problems)
    )
    approved_scheme(made[0])
    now = timezone.now()
    for start in range(0, count, 100_000):
        insert_rows(
            Proof,
            ("problem_id", "generator", "sample_key", "sample_index", "text", "text_hash",
             "source", "metadata", "created_at", "updated_at"),
            [
                (made[n % problems].pk, generator, str(n), n, f"Proof {n}.", f"{n:064d}",
                 "tests", {}, now, now)
                for n in range(start, min(count, start + 100_000))
            ],
        )  # fmt: skip
    return made
