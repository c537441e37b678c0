import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.problems.page_factories import (
    ProblemFactory,
    ProofFactory,
    ReferenceSolutionFactory,
    VerifierAnalysisFactory,
)

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def count_queries(client, url, **extra) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, **extra)
    assert response.status_code == 200
    return len(queries)


def listed_ids(response) -> list[str]:
    return re.findall(r'class="problem-link" href="[^"]+">([^<]+)</a>', response.content.decode())


@pytest.fixture
def expert_client(client, expert_user):
    client.force_login(expert_user)
    return client


@pytest.fixture
def reader_client(client, researcher_user):
    """A researcher: sees what experts, grading blind, do not (core.visibility)."""
    client.force_login(researcher_user)
    return client


# --- problem list ----------------------------------------------------------------------------


def test_problem_list_shows_problems_with_counts(expert_client):
    problem = ProblemFactory(external_id="USAMO-2025-P1", contest="USAMO", year=2025, topic="N")
    ReferenceSolutionFactory(problem=problem)
    ProofFactory.create_batch(2, problem=problem)
    response = expert_client.get(reverse("problems:list"))
    assert response.status_code == 200
    html = response.content.decode()
    assert listed_ids(response) == ["USAMO-2025-P1"]
    assert '<td class="num">1</td>' in html and '<td class="num">2</td>' in html
    assert "Number theory" in html
    assert '<option value="USAMO">USAMO</option>' in html


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("contest=IMO", ["IMO-2024-1", "IMO-2025-2"]),
        ("year=2025", ["IMO-2025-2", "USAMO-2025-3"]),
        ("topic=G", ["USAMO-2025-3"]),
        ("q=triangle", ["USAMO-2025-3"]),
        ("q=imo-2025", ["IMO-2025-2"]),
        ("contest=IMO&year=2025", ["IMO-2025-2"]),
        ("year=not-a-year", ["IMO-2024-1", "IMO-2025-2", "USAMO-2025-3"]),
    ],
)
def test_problem_list_filters(expert_client, query, expected):
    ProblemFactory(external_id="IMO-2024-1", contest="IMO", year=2024, number="1", topic="A")
    ProblemFactory(external_id="IMO-2025-2", contest="IMO", year=2025, number="2", topic="C")
    ProblemFactory(
        external_id="USAMO-2025-3",
        contest="USAMO",
        year=2025,
        number="3",
        topic="G",
        statement="Let $ABC$ be a triangle.",
    )
    response = expert_client.get(reverse("problems:list") + "?" + query)
    assert listed_ids(response) == expected


def test_problem_list_paginates_and_htmx_gets_only_the_fragment(expert_client):
    ProblemFactory.create_batch(30, contest="Big")
    page_one = expert_client.get(reverse("problems:list"))
    assert len(listed_ids(page_one)) == 25
    assert "Page 1 of 2" in page_one.content.decode()
    fragment = expert_client.get(reverse("problems:list") + "?contest=Big&page=2", **HTMX)
    html = fragment.content.decode()
    assert len(listed_ids(fragment)) == 5
    assert "<html" not in html and 'id="problem-results"' not in html
    assert "Page 2 of 2" in html
    assert 'href="?contest=Big&amp;page=1"' in html and 'hx-get="?contest=Big&amp;page=1"' in html


def test_problem_list_shows_statement_previews_and_serves_history_restores_whole(expert_client):
    ProblemFactory(external_id="P-1", statement="Find all $n$ with " + "many words " * 40)
    html = expert_client.get(reverse("problems:list")).content.decode()
    assert '<span class="math inline">n</span>' in html and "\u2026" in html
    restore = expert_client.get(
        reverse("problems:list"), HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in restore.content.decode()
    assert "HX-Request" in restore["Vary"]


def test_problem_list_query_count_is_constant(expert_client):
    ProblemFactory.create_batch(3)
    few = count_queries(expert_client, reverse("problems:list"))
    for problem in ProblemFactory.create_batch(40, contest="Other", year=2020):
        ProofFactory(problem=problem)
        ReferenceSolutionFactory(problem=problem)
    many = count_queries(expert_client, reverse("problems:list"))
    assert few == many <= 9
    assert count_queries(expert_client, reverse("problems:list") + "?page=2", **HTMX) <= 6


def test_empty_list_says_so(expert_client):
    response = expert_client.get(reverse("problems:list") + "?q=nothing-matches")
    assert "0 problems" in response.content.decode()
    assert "Try fewer filters" in response.content.decode()


# --- problem page ----------------------------------------------------------------------------


def test_problem_page_shows_statement_solutions_and_proofs_with_ratings(reader_client):
    problem = ProblemFactory(
        external_id="PB-Basic-002",
        statement="Show that $a^2+b^2 \\ge 2ab$.",
        final_answer="$2ab$",
        metadata={"grading_guidelines": "Award **7** for a complete proof."},
    )
    ReferenceSolutionFactory(problem=problem, text="Because $(a-b)^2 \\ge 0$.")
    proof = ProofFactory(
        problem=problem,
        generator="DeepSeekMath-V2",
        metadata={"ratings": [{"kind": "human", "value": 8, "max": 10, "source": "Putnam"}]},
    )
    VerifierAnalysisFactory(proof=proof, score=Decimal("0.5"))
    response = reader_client.get(reverse("problems:detail", args=["PB-Basic-002"]))
    html = response.content.decode()
    assert '<span class="math inline">a^2+b^2 \\ge 2ab</span>' in html
    assert '<span class="math inline">(a-b)^2 \\ge 0</span>' in html
    assert "<strong>7</strong>" in html
    assert "DeepSeekMath-V2" in html and "8/10 human" in html
    assert '<span class="tag warn" title="verifier-v">0.5</span>' in html
    assert reverse("problems:proof", args=[proof.pk]) in html


def test_problem_page_is_404_for_unknown_id(expert_client):
    assert expert_client.get(reverse("problems:detail", args=["NOPE-1"])).status_code == 404


def test_problem_page_escapes_hostile_text(expert_client):
    ProblemFactory(external_id="X-1", statement="<script>alert(1)</script> [a](javascript:x)")
    html = expert_client.get(reverse("problems:detail", args=["X-1"])).content.decode()
    assert "<script>alert" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_problem_page_query_count_is_constant(expert_client):
    problem = ProblemFactory(external_id="Q-1")
    ReferenceSolutionFactory(problem=problem)
    VerifierAnalysisFactory(proof=ProofFactory(problem=problem))
    url = reverse("problems:detail", args=["Q-1"])
    few = count_queries(expert_client, url)
    ReferenceSolutionFactory.create_batch(3, problem=problem)
    for proof in ProofFactory.create_batch(20, problem=problem):
        VerifierAnalysisFactory.create_batch(2, proof=proof)
    assert count_queries(expert_client, url) == few <= 8


# --- proof page ------------------------------------------------------------------------------


def test_proof_page_shows_statement_proof_analyses_ratings_and_spans(reader_client):
    problem = ProblemFactory(external_id="P-7", statement="Prove \\(1+1=2\\).")
    first = ProofFactory(problem=problem, generator="a", sample_index=0)
    proof = ProofFactory(
        problem=problem,
        generator="b",
        sample_index=0,
        text="By definition, \\[1+1=2.\\]",
        metadata={
            "ratings": [{"kind": "automatic", "value": 1, "max": 1, "source": "OPC judge"}],
            "error_spans": [{"start": 0, "end": 13, "text": "By definition", "comment": "Which?"}],
        },
    )
    last = ProofFactory(problem=problem, generator="c", sample_index=0)
    VerifierAnalysisFactory(proof=proof, verifier="ds-verifier", score=Decimal("1"))
    VerifierAnalysisFactory(
        proof=proof,
        verifier="other",
        text="Looks fine to me.",
        score=None,
        kept_contract=False,
        score_problem="no \\boxed{} score after the key phrase",
    )
    html = reader_client.get(reverse("problems:proof", args=[proof.pk])).content.decode()
    assert '<span class="math inline">1+1=2</span>' in html
    assert '<span class="math block">1+1=2.</span>' in html
    assert '<span class="math inline">\\boxed{1}</span>' in html
    assert '<span class="tag ok">score 1</span>' in html
    assert "kept the output contract" in html and "broke the output contract" in html
    assert "no \\boxed{} score after the key phrase" in html
    assert "1/1</span> automatic" in html and "OPC judge" in html
    assert "<q>By definition</q>" in html and "Which?" in html
    assert f'href="{reverse("problems:proof", args=[first.pk])}"' in html
    assert f'href="{reverse("problems:proof", args=[last.pk])}"' in html


def test_proof_page_is_404_for_unknown_proof(expert_client):
    assert expert_client.get(reverse("problems:proof", args=[999999])).status_code == 404


def test_proof_page_tolerates_malformed_ratings(reader_client):
    proof = ProofFactory(metadata={"ratings": "seven", "error_spans": []})
    response = reader_client.get(reverse("problems:proof", args=[proof.pk]))
    assert "No ratings recorded." in response.content.decode()


def test_proof_page_query_count_is_constant(expert_client):
    proof = ProofFactory()
    VerifierAnalysisFactory(proof=proof)
    url = reverse("problems:proof", args=[proof.pk])
    few = count_queries(expert_client, url)
    VerifierAnalysisFactory.create_batch(10, proof=proof)
    ProofFactory.create_batch(20, problem=proof.problem)
    assert count_queries(expert_client, url) == few <= 8


# --- home ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user_fixture", "present", "absent"),
    [
        ("admin_user", ["tile-admin", "tile-researcher"], ["tile-expert", "tile-adjudicator"]),
        ("expert_user", ["tile-expert"], ["tile-admin", "tile-researcher"]),
        ("adjudicator_user", ["tile-adjudicator"], ["tile-admin", "tile-expert"]),
        ("researcher_user", ["tile-researcher"], ["tile-admin", "tile-expert"]),
    ],
)
def test_home_page_per_role(client, request, user_fixture, present, absent):
    client.force_login(request.getfixturevalue(user_fixture))
    html = client.get(reverse("home")).content.decode()
    for name in present:
        assert name in html
    for name in absent:
        assert name not in html
    assert reverse("problems:list") in html


def test_home_page_for_a_user_without_role(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("nobody", password="x" * 12))
    html = client.get(reverse("home")).content.decode()
    assert "none yet" in html and 'class="tiles"' not in html


def test_an_expert_reads_the_proof_and_problem_blind(expert_client):
    proof = ProofFactory(generator="DeepSeekMath-V2")
    VerifierAnalysisFactory(proof=proof, score=Decimal("0.5"))
    html = expert_client.get(reverse("problems:proof", args=[proof.pk])).content.decode()
    assert proof.text.split(".")[0] in html and 'id="blind-note"' in html
    assert "DeepSeekMath-V2" not in html and "verifier-v" not in html and "6/7" not in html
    html = expert_client.get(reverse("problems:detail", args=[proof.problem.external_id]))
    assert "DeepSeekMath-V2" not in html.content.decode()
    assert "Verifier scores" not in html.content.decode()
