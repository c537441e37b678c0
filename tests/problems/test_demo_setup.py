import re
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command
from django.test import override_settings

from config.roles import Role, user_roles
from problems.demo.text import CLOSING, OPENING
from problems.models import Problem, Proof, ReferenceSolution, VerifierAnalysis

pytestmark = pytest.mark.django_db


def run() -> str:
    out = StringIO()
    call_command("demo_setup", stdout=out)
    return out.getvalue()


def snapshot() -> dict:
    return {
        "problems": list(Problem.objects.values_list("external_id", "statement").order_by("id")),
        "solutions": list(ReferenceSolution.objects.values_list("id", "text_hash").order_by("id")),
        "proofs": list(Proof.objects.values_list("id", "text_hash").order_by("id")),
        "analyses": list(VerifierAnalysis.objects.values_list("id", "score").order_by("id")),
    }


@override_settings(DEBUG=True)
def test_demo_setup_loads_the_corpus_and_is_idempotent():
    run()
    first = snapshot()
    run()
    assert snapshot() == first
    assert len(first["problems"]) >= 6
    assert set(Problem.objects.values_list("topic", flat=True)) == {"A", "C", "G", "N"}
    for problem in Problem.objects.prefetch_related("reference_solutions", "proofs__analyses"):
        assert problem.reference_solutions.count() >= 1
        qualities = sorted(proof.metadata["demo_quality"] for proof in problem.proofs.all())
        assert qualities == ["correct", "gap", "wrong"]
        for proof in problem.proofs.all():
            [analysis] = proof.analyses.all()
            expected = {"correct": "1", "gap": "0.5", "wrong": "0"}[proof.metadata["demo_quality"]]
            assert analysis.text.startswith(OPENING)
            assert analysis.text.rstrip().endswith(f"{CLOSING} \\boxed{{{expected}}}")
            assert analysis.score == float(expected) and analysis.kept_contract
            assert proof.metadata["ratings"][0]["max"] == 7


@override_settings(DEBUG=True)
def test_demo_setup_prints_working_logins_for_each_role():
    output = run()
    logins = re.findall(r"^\s+(\S+)\s+(\S+)\s+(admin|expert|adjudicator|researcher)$", output, re.M)
    assert {name for name, _, _ in logins} == {
        "admin", "expert1", "expert2", "adjudicator", "researcher",
    }  # fmt: skip
    for username, password, role in logins:
        user = authenticate(username=username, password=password)
        assert user is not None, username
        assert Role(role) in user_roles(user)
    run()
    assert authenticate(username="expert2", password=dict((n, p) for n, p, _ in logins)["expert2"])


@override_settings(DEBUG=False)
def test_demo_setup_refuses_demo_accounts_without_debug():
    with pytest.raises(CommandError, match="DEBUG is off"):
        call_command("demo_setup", stdout=StringIO())
    call_command("demo_setup", "--no-accounts", stdout=StringIO())
    assert Problem.objects.count() >= 6
    assert not authenticate(username="admin", password="admin-demo-pass")
