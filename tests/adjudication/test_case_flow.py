"""The adjudicator's flow on the case page: the proof typeset first, quotes rendered, and the
next case offered once one is resolved."""

import pytest
from django.urls import reverse

from adjudication.models import AdjudicationCase
from tests.adjudication.factories import ErrorSpanFactory, ItemFactory, judge
from tests.factories import UserFactory
from tests.problems.page_factories import ProofFactory

pytestmark = pytest.mark.django_db

PROOF = "Since $x^2 \\ge 0$ for every real $x$, the sum is **positive**."


def disputed(proof_text=PROOF) -> AdjudicationCase:
    item = ItemFactory(proof=ProofFactory(text=proof_text))
    a, _ = judge(item, 1, 6)
    ErrorSpanFactory(grade=a, start=6, end=17, category="skipped_steps", note="")
    return AdjudicationCase.objects.get(item=item)


def test_case_page_typesets_the_proof_and_renders_quotes(client):
    case = disputed()
    client.force_login(UserFactory(roles=["adjudicator"]))
    html = client.get(reverse("adjudication:case", args=[case.pk])).content.decode()
    typeset = html.index('id="proof-typeset"')
    assert typeset < html.index('id="proof-source"')
    assert "<strong>positive</strong>" in html[typeset : html.index('id="proof-source"')]
    quote = html[html.index('class="prose prose-inline quote"') :][:200]
    assert "$x^2" not in quote and 'class="math' in quote


def test_after_resolving_a_case_the_next_one_is_offered(client):
    first, second = disputed(), disputed()
    client.force_login(UserFactory(roles=["adjudicator"]))
    response = client.post(
        reverse("adjudication:resolve", args=[first.pk]),
        {"action": "new_score", "score": "3", "rationale": "Half the argument."},
        follow=True,
    )
    html = response.content.decode()
    assert "Case resolved" in html
    assert f'id="next-case" href="{reverse("adjudication:case", args=[second.pk])}"' in html
    client.post(
        reverse("adjudication:resolve", args=[second.pk]),
        {"action": "new_score", "score": "3", "rationale": "Same."},
    )
    html = client.get(reverse("adjudication:case", args=[second.pk])).content.decode()
    assert "No other case waits for you." in html
