"""The Python client (clients/python) against a live Proofmark: a researcher's work from a corpus
file to a loaded dataset, through the real HTTP server and the real Celery worker, and the
check that every operation the client calls, and every field its types name, is in the schema
the server serves (an API change that breaks the client fails here)."""

import copy
import dataclasses
import json

import pytest
from proofmark_client import OPERATIONS, TYPES, JobFailed, Proofmark, ProofmarkError
from rest_framework.authtoken.models import Token

from tests.factories import UserFactory
from tests.problems.import_files import generic_problem, generic_proof

pytestmark = pytest.mark.django_db(transaction=True)


def client_for(live_server, user) -> Proofmark:
    token, _ = Token.objects.get_or_create(user=user)
    return Proofmark(live_server.url, token.key, timeout=30)


# --- The schema the client leans on -------------------------------------------------------------


def _component(schema: dict, ref_or_schema: dict) -> str | None:
    ref = ref_or_schema.get("$ref", "")
    return ref.rsplit("/", 1)[-1] if ref else None


def schema_drift(schema: dict) -> list[str]:
    """What the client calls or reads that the schema lacks, one line each."""
    problems = []
    components = schema["components"]["schemas"]
    paths = schema["paths"]
    for name, (method, path, request, sent, answer) in OPERATIONS.items():
        operation = paths.get(path, {}).get(method)
        if operation is None:
            problems.append(f"{name}: no {method.upper()} {path}")
            continue
        if request is not None:
            bodies = operation.get("requestBody", {}).get("content", {})
            refs = {_component(schema, body.get("schema", {})) for body in bodies.values()}
            if request not in refs:
                problems.append(f"{name}: its body is not {request} (the schema says {refs})")
            known = set(components.get(request, {}).get("properties", {}))
            problems += [f"{name}: {request} has no field {f}" for f in sent if f not in known]
        if answer is not None:
            ok = [code for code in operation.get("responses", {}) if code.startswith("2")]
            refs = {
                _component(schema, body.get("schema", {}))
                for code in ok
                for body in operation["responses"][code].get("content", {}).values()
            }
            if answer not in refs:
                problems.append(f"{name}: it does not answer {answer} (the schema says {refs})")
    for kind in TYPES:
        component = components.get(kind.SCHEMA)
        if component is None:
            problems.append(f"{kind.__name__}: no component {kind.SCHEMA}")
            continue
        known = set(component.get("properties", {}))
        problems += [
            f"{kind.__name__}: {kind.SCHEMA} has no field {f.name}"
            for f in dataclasses.fields(kind)
            if f.name not in known
        ]
    # the answers of next/: one of the two types the client reads
    one_of = components.get("NextItemOutput", {}).get("oneOf", [])
    if {_component(schema, s) for s in one_of} != {"ItemDetailOutput", "NoWorkLeftOutput"}:
        problems.append("NextItemOutput: not ItemDetailOutput or NoWorkLeftOutput")
    return problems


def test_every_operation_and_field_the_client_uses_is_in_the_served_schema(live_server):
    schema = client_for(live_server, UserFactory(username="schema-reader", roles=["researcher"]))
    served = schema.schema()
    assert served["openapi"].startswith("3.")
    assert schema_drift(served) == []

    # the check sees drift: a field gone from an answer, an operation moved, a body renamed
    drifted = copy.deepcopy(served)
    del drifted["components"]["schemas"]["ExportJobOutput"]["properties"]["sha256"]
    drifted["paths"]["/api/v1/items/{item_id}/judge/"] = drifted["paths"].pop(
        "/api/v1/items/{item_id}/submit/"
    )
    del drifted["components"]["schemas"]["ImportCreateInput"]["properties"]["licence"]
    assert schema_drift(drifted) == [
        "import_create: ImportCreateInput has no field licence",
        "grade_submit: no POST /api/v1/items/{item_id}/submit/",
        "ExportJob: ExportJobOutput has no field sha256",
    ]


# --- A researcher's work, end to end -------------------------------------------------------------


@pytest.fixture
def offline_hf(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-home" / "datasets"))


@pytest.mark.worker
def test_from_a_corpus_file_to_a_loaded_dataset(
    live_server, celery_worker_process, tmp_path, offline_hf
):
    admin = client_for(live_server, UserFactory(username="client-admin", roles=["admin"]))
    expert = client_for(live_server, UserFactory(username="client-expert", roles=["expert"]))
    researcher = client_for(
        live_server, UserFactory(username="client-researcher", roles=["researcher"])
    )
    corpus = tmp_path / "corpus.jsonl"
    records = [
        generic_problem("CL-1", schemes=[]),
        generic_proof("CL-1", "0", ratings=[]),
        generic_proof("CL-1", "1", ratings=[], text="It is obvious."),
        generic_problem("CL-2", statement="Show that $n^2 \\ge n$ for whole $n$.", schemes=[]),
        generic_proof("CL-2", "0", ratings=[], text="$n^2 - n = n(n-1) \\ge 0$."),
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))

    imported = admin.import_file(corpus, timeout=120)
    assert imported.status == "succeeded", imported.error
    assert imported.original_name == "corpus.jsonl"
    assert imported.counts["proofs"]["created"] == 3, imported.counts

    campaign = admin.campaign_create(
        "Client pilot", slug="client-pilot", scale="0-7", double_share="0",
        experts=["client-expert"],
    )  # fmt: skip
    assert (campaign.slug, campaign.scale) == ("client-pilot", "0-7")
    added = admin.items_add("client-pilot", all=True)
    assert len(added.created) == 3

    graded = []
    while (work := expert.next_judgement("client-pilot")) is not None:
        assert work.item.campaign == "client-pilot" and work.grade is None
        score = 1 if "obvious" in work.item.proof_text else 6 if work.item.problem == "CL-2" else 7
        key = f"client-{work.item.id}"
        grade = expert.submit_judgement(work.item.id, score=score, comment="ok", submit_key=key)
        again = expert.submit_judgement(work.item.id, score=score, comment="ok", submit_key=key)
        assert grade.status == "submitted" and again.id == grade.id  # idempotent
        assert grade.score == f"{score}.00"
        graded.append((work.item.problem, score))
    assert sorted(graded) == [("CL-1", 1), ("CL-1", 7), ("CL-2", 6)]

    export = researcher.export(
        "client-pilot", format="proofbench", file_type="parquet", layout="hf", timeout=120
    )
    assert export.job.status == "succeeded" and export.job.layout == "hf"
    assert export.job.manifest["counts"]["rows"] == 3
    frame = export.to_pandas()
    assert sorted(frame["expert_rating"].tolist()) == [1, 6, 7]
    assert set(frame["problem_id"]) == {"CL-1", "CL-2"}
    loaded = export.to_dataset()
    assert list(loaded) == ["train"] and loaded["train"].num_rows == 3
    assert loaded["train"].features["expert_rating"].dtype == "int64"
    assert (export.hf_folder() / "README.md").read_text().startswith("---\n")

    plain = researcher.export("client-pilot", format="dv", file_type="jsonl", timeout=120)
    assert sorted(plain.to_dataset()["train"]["score"]) == [0.0, 0.5, 1.0]

    with pytest.raises(JobFailed) as failed:  # a folder with no row: the job fails, saying why
        researcher.export(
            "client-pilot",
            format="dv",
            file_type="parquet",
            layout="hf",
            filters={"contest": "No Such Contest"},
            timeout=120,
        )
    assert "no row matches the filters" in failed.value.job.error
    assert failed.value.job.status == "failed" and "failed" in str(failed.value)


def test_a_refusal_raises_proofmark_error_with_the_status_and_the_body(live_server):
    UserFactory(username="someone", roles=["expert"])
    researcher = client_for(live_server, UserFactory(username="client-res", roles=["researcher"]))
    with pytest.raises(ProofmarkError) as refused:
        researcher.campaign_create("Not mine", experts=["someone"])
    assert refused.value.status == 403
    assert refused.value.body == {"detail": "Your role does not allow this operation."}
    assert "403 Your role does not allow" in str(refused.value)
    with pytest.raises(ProofmarkError) as bad:
        researcher.export_start("no-such-campaign", format="dv", file_type="xlsx")
    assert bad.value.status == 400
    assert set(bad.value.body) == {"campaign", "file_type"}  # each bad field, named
    assert "xlsx" in str(bad.value.body["file_type"])
    nobody = Proofmark(live_server.url, "0" * 40)
    with pytest.raises(ProofmarkError) as unknown:
        nobody.export_job(1)
    assert unknown.value.status == 401 and unknown.value.body == {"detail": "Invalid token."}
