"""Factories for marking schemes and their ratings."""

import factory

from rubrics.models import MarkingScheme, SchemeMethod, SchemeRating
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory

VALID_SCHEME = r"""## Checkpoints (max 7 pts total)
- (3 pts) **Key identity**: proves $a_{n+1} - a_n = 2^n$. [additive]
- (2 pts) **Bound**: shows $a_n < 2^{n+1}$ for all $n$. [additive]
- (2 pts) **Conclusion**: deduces the claim for every $n \ge 1$. [additive]

## Zero-credit items
- Checking $n \le 3$ by hand.

## Deductions
- Cap at 5/7 if the equality case is missing.
"""


class MarkingSchemeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MarkingScheme

    problem = factory.SubFactory(ProblemFactory)
    version = factory.Sequence(lambda n: n + 1)
    method = SchemeMethod.MANUAL
    text = VALID_SCHEME
    is_valid = True


class SchemeRatingFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SchemeRating

    scheme = factory.SubFactory(MarkingSchemeFactory)
    rater = factory.SubFactory(UserFactory, roles=["expert"])
    score = 2
