import re
from decimal import Decimal

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from drf_spectacular.validation import validate_schema

from tests.problems.page_factories import (
    ProblemFactory,
    ProofFactory,
    ReferenceSolutionFactory,
    VerifierAnalysisFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(api_client_for, researcher_user):
    return api_client_for(researcher_user)


def test_problem_list_filters_and_paginates(api):
    ProblemFactory(external_id="IMO-2025-P1", contest="IMO", year=2025, topic="N")
    ProblemFactory.create_batch(55, contest="Bulk", year=2020, topic="C")
    response = api.get(reverse("api-problem-list"))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 56 and len(body["results"]) == 50 and body["next"]
    assert api.get(body["next"]).json()["results"][-1]["contest"] in {"Bulk", "IMO"}
    filtered = api.get(reverse("api-problem-list"), {"contest": "IMO", "year": 2025, "topic": "N"})
    assert [p["external_id"] for p in filtered.json()["results"]] == ["IMO-2025-P1"]
    searched = api.get(reverse("api-problem-list"), {"search": "imo-2025"})
    assert searched.json()["count"] == 1


def test_problem_list_rejects_bad_filters_naming_the_field(api):
    response = api.get(reverse("api-problem-list"), {"year": "soon", "topic": "Z"})
    assert response.status_code == 400
    assert set(response.json()) == {"year", "topic"}


def test_problem_detail_by_external_id(api):
    problem = ProblemFactory(external_id="PB-Basic-002", statement="Show $x$.")
    ReferenceSolutionFactory(problem=problem, text="Because.")
    ProofFactory.create_batch(2, problem=problem)
    body = api.get(reverse("api-problem-detail", args=["PB-Basic-002"])).json()
    assert body["external_id"] == "PB-Basic-002" and body["statement"] == "Show $x$."
    assert body["proof_count"] == 2
    assert [s["text"] for s in body["reference_solutions"]] == ["Because."]
    assert api.get(reverse("api-problem-detail", args=["NOPE"])).status_code == 404


def test_proof_list_filters_by_problem_and_generator(api):
    one, two = ProblemFactory(external_id="P-1"), ProblemFactory(external_id="P-2")
    ProofFactory(problem=one, generator="gpt")
    ProofFactory(problem=one, generator="gemini")
    ProofFactory(problem=two, generator="gpt")
    url = reverse("api-proof-list")
    assert api.get(url).json()["count"] == 3
    only = api.get(url, {"problem": "P-1", "generator": "gpt"}).json()["results"]
    assert [(p["problem"], p["generator"]) for p in only] == [("P-1", "gpt")]
    assert only[0]["metadata"]["ratings"][0]["max"] == 7
    assert api.get(url, {"problem": "P-3"}).json()["count"] == 0


def test_proof_detail_includes_analyses(api):
    proof = ProofFactory(text="Proof text.")
    VerifierAnalysisFactory(proof=proof, score=Decimal("0.5"))
    VerifierAnalysisFactory(proof=proof, score=None, kept_contract=False, score_problem="no box")
    body = api.get(reverse("api-proof-detail", args=[proof.pk])).json()
    assert body["text"] == "Proof text." and body["problem"] == proof.problem.external_id
    analyses = {a["score_problem"]: (a["score"], a["kept_contract"]) for a in body["analyses"]}
    assert analyses == {"": ("0.5", True), "no box": (None, False)}
    assert api.get(reverse("api-proof-detail", args=[987654])).status_code == 404


def test_list_query_counts_stay_constant(api):
    ProofFactory.create_batch(3)
    with CaptureQueriesContext(connection) as few:
        api.get(reverse("api-proof-list"))
    ProofFactory.create_batch(40)
    with CaptureQueriesContext(connection) as many:
        api.get(reverse("api-proof-list"))
    assert len(few) == len(many)
    with CaptureQueriesContext(connection) as problems_few:
        api.get(reverse("api-problem-list"))
    ProblemFactory.create_batch(30)
    with CaptureQueriesContext(connection) as problems_many:
        api.get(reverse("api-problem-list"))
    assert len(problems_few) == len(problems_many)


def test_token_auth_is_required(client, api_client_for, researcher_user):
    from rest_framework.test import APIClient

    anonymous = APIClient().get(reverse("api-problem-list"))
    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"] == "Token"
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert bad.get(reverse("api-problem-list")).status_code == 401


def test_openapi_schema_is_valid_and_lists_the_corpus_endpoints(api):
    response = api.get(reverse("api-schema"))
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    validate_schema(schema)
    for path in ("/api/v1/problems/", "/api/v1/problems/{external_id}/", "/api/v1/proofs/"):
        assert path in schema["paths"]
    parameters = {p["name"] for p in schema["paths"]["/api/v1/proofs/"]["get"]["parameters"]}
    assert parameters == {"problem", "generator", "page", "page_size"}


def test_api_docs_page_loads_nothing_from_off_the_machine(client, researcher_user):
    client.force_login(researcher_user)
    response = client.get(reverse("api-docs"))
    assert response.status_code == 200
    html = response.content.decode()
    assets = re.findall(r'(?:src|href)="([^"#]+)"', html)
    assert all(a.startswith("/") for a in assets), assets  # our own pages and static files
    assert 'id="list_proofs"' in html or "/api/v1/proofs/" in html  # the operations, as tables
    assert "cdn.jsdelivr" not in html and "unpkg" not in html
