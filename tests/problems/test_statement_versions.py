"""Statements have versions: a change under rated proofs keeps the old text for them, warns
naming the problem, and the source's alternative statements are kept (written by us in the
shapes of DeepSeekMath-V2's outputs and IMO-ProofBench's CSV)."""

import csv
import json

import pytest
from django.urls import reverse

from problems.models import Problem, ProblemStatement, Proof
from problems.services import corpus_import
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CORRECTED = "Let $\\theta \\in (0, \\pi)$. Prove that $\\sin \\theta > 0$."
ORIGINAL = "Let $\\theta \\in (0, 2\\pi)$. Prove that $\\sin \\theta > 0$."


def deepseek_outputs(tmp_path, *, proofs: int = 1):
    """DeepSeekMath-V2's outputs: one proof (sample 0) a problem, `proofs` problems."""
    path = tmp_path / "IMO-ProofBench-Advanced.jsonl"
    with path.open("w") as out:
        for index in range(proofs):
            row = {
                "problem_idx": "PB-Advanced-005" if index == 0 else f"PB-Advanced-10{index}",
                "question": CORRECTED,
                "question_original": ORIGINAL,
                "model_prediction": {
                    "proof": f"Proof {index}. On $(0, \\pi)$ the sine is positive.",
                    "human_rating": 7 - index,
                    "average_automatic_rating": 1.0,
                },
                "level": "Advanced",
                "type": "Algebra",
            }
            out.write(json.dumps(row) + "\n")
    return path


def proofbench_csv(tmp_path, statement: str = ORIGINAL):
    path = tmp_path / "proofbench_v2.csv"
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(
            [
                "Problem ID",
                "Problem",
                "Solution",
                "Grading guidelines",
                "Category",
                "Level",
                "Short Answer",
                "Source",
            ]
        )
        writer.writerow(
            ["PB-Advanced-005", statement, "The sine is positive there.", "", "Algebra",
             "Advanced", "", "tests"]
        )  # fmt: skip
    return path


def warnings_of(report) -> list[str]:
    return [issue["message"] for issue in report.issues if issue["level"] == "warning"]


def test_a_changed_statement_under_rated_proofs_is_a_new_version_and_a_warning(tmp_path):
    first = corpus_import(path=deepseek_outputs(tmp_path, proofs=1), fmt="deepseek")
    assert first.ok and first.counts["proofs"]["created"] == 1
    problem = Problem.objects.get(external_id="PB-Advanced-005")
    assert (problem.statement, problem.statement_version) == (CORRECTED, 1)
    # the source's other wording is kept beside the statement
    assert problem.metadata["alternative_statements"] == [
        {
            "source": "deepseek IMO-ProofBench-Advanced.jsonl",
            "field": "question_original",
            "text": ORIGINAL,
        }
    ]
    assert not any("question_original" in w for w in warnings_of(first))

    second = corpus_import(path=proofbench_csv(tmp_path), fmt="imobench")
    assert second.ok
    [warning] = [w for w in warnings_of(second) if "PB-Advanced-005" in w]
    assert "its 1 proof(s) were rated against" in warning and "now version 2" in warning
    problem.refresh_from_db()
    assert (problem.statement, problem.statement_version) == (ORIGINAL, 2)
    [past] = ProblemStatement.objects.filter(problem=problem)
    assert (past.version, past.text) == (1, CORRECTED)
    assert past.replaced_by == "imobench proofbench_v2.csv"
    proof = Proof.objects.get(problem=problem)
    assert proof.statement == past
    assert (proof.statement_text, proof.statement_version) == (CORRECTED, 1)

    # DeepSeek's file again: its new proof is rated against its own (corrected) text once more
    third = corpus_import(path=deepseek_outputs(tmp_path, proofs=2), fmt="deepseek")
    problem.refresh_from_db()
    assert (problem.statement, problem.statement_version) == (CORRECTED, 3)
    assert warnings_of(third) == []  # no proof was paired with version 2
    pinned = Proof.objects.get(problem=problem)  # the same proof (sample 0) keeps version 1
    assert (pinned.statement_text, pinned.statement_version) == (CORRECTED, 1)
    other = Proof.objects.get(problem__external_id="PB-Advanced-101")
    assert other.statement is None and other.statement_version == 1
    assert ProblemStatement.objects.filter(problem=problem).count() == 2


def test_a_statement_set_before_any_proof_changes_without_a_warning(tmp_path):
    corpus_import(path=proofbench_csv(tmp_path), fmt="imobench")
    report = corpus_import(path=deepseek_outputs(tmp_path), fmt="deepseek")
    assert warnings_of(report) == []
    problem = Problem.objects.get(external_id="PB-Advanced-005")
    assert (problem.statement, problem.statement_version) == (CORRECTED, 2)
    assert ProblemStatement.objects.get(problem=problem).text == ORIGINAL
    for proof in Proof.objects.all():
        assert proof.statement is None and proof.statement_text == CORRECTED


def test_the_same_statement_again_makes_no_version_and_a_dry_run_writes_none(tmp_path):
    corpus_import(path=deepseek_outputs(tmp_path), fmt="deepseek")
    again = corpus_import(path=deepseek_outputs(tmp_path), fmt="deepseek")
    assert again.counts["problems"] == {"created": 0, "updated": 0, "unchanged": 1}
    dry = corpus_import(path=proofbench_csv(tmp_path), fmt="imobench", dry_run=True)
    assert any("PB-Advanced-005" in w and "1 proof(s)" in w for w in warnings_of(dry))
    assert not ProblemStatement.objects.exists()
    assert Problem.objects.get().statement_version == 1
    assert not Proof.objects.filter(statement__isnull=False).exists()


def test_admins_see_the_earlier_and_alternative_statements_and_a_proof_its_own(tmp_path, client):
    corpus_import(path=deepseek_outputs(tmp_path), fmt="deepseek")
    corpus_import(path=proofbench_csv(tmp_path), fmt="imobench")
    proof = Proof.objects.get(problem__external_id="PB-Advanced-005")
    admin = UserFactory(username="statements-admin", roles=["admin"])
    expert = UserFactory(username="statements-expert", roles=["expert"])

    client.force_login(admin)
    page = client.get("/problems/PB-Advanced-005/").content.decode()
    history = page[page.index('id="statement-history"') :]
    assert "Version 1: 1 proof rated against it" in history
    assert "question_original" in history and "never shown to experts" in history
    assert "(0, \\pi)" in history and "(0, 2\\pi)" in history
    shown = client.get(f"/problems/proofs/{proof.pk}/").content.decode()
    statement = shown[shown.index('class="pane-body prose statement"') :][:400]
    assert "(0, \\pi)" in statement and "2\\pi" not in statement
    assert "statement version 1" in shown and "now version 2" in shown

    client.force_login(expert)
    assert 'id="statement-history"' not in client.get("/problems/PB-Advanced-005/").content.decode()


def test_the_grading_page_and_the_api_show_the_statement_the_proof_was_rated_against(
    tmp_path, client
):
    from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in

    corpus_import(path=deepseek_outputs(tmp_path), fmt="deepseek")
    corpus_import(path=proofbench_csv(tmp_path), fmt="imobench")
    proof = Proof.objects.get(problem__external_id="PB-Advanced-005")
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, proof=proof)
    expert = expert_in(campaign)
    client.force_login(expert)
    page_url = client.post(reverse("annotation:next", args=[campaign.slug])).url
    html = client.get(page_url).content.decode()
    pane = html[html.index('id="pane-problem"') :][:1500]
    assert "(0, \\pi)" in pane and "2\\pi" not in pane
    assert "statement version 1, the one this proof was rated against" in pane
    body = client.get(f"/api/v1/items/{item.pk}/").json()
    assert body["item"]["statement"] == CORRECTED and body["item"]["statement_version"] == 1
