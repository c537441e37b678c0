"""`manage.py demo_setup`: the demo corpus, accounts, schemes, campaigns, labels and the open
case, loaded through each app's services; idempotent. Committed transactions (transactional_db)
so that the grades' on-commit signals reach adjudication, as in `make run`."""

import re
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import RequestFactory, override_settings

from adjudication.models import AdjudicationCase, CaseStatus, FinalLabel
from adjudication.selectors import cases_for_user
from annotation.demo import GRADING_SLUG, REVIEW_SLUG
from annotation.models import Campaign, ErrorSpan, Grade, GradeStatus, Item, MetaReview
from annotation.services import assignment_next
from core.roles import Role, user_roles
from problems.demo.text import CLOSING, OPENING
from problems.models import Problem
from rubrics.models import MarkingScheme, SchemeRating, SchemeStatus
from rubrics.structure import Scheme

pytestmark = pytest.mark.django_db(transaction=True)

APPS = ("problems", "rubrics", "annotation", "adjudication", "exports", "auth")


def run() -> str:
    out = StringIO()
    call_command("demo_setup", stdout=out)
    return out.getvalue()


def snapshot() -> dict:
    """Every row of every model of our apps (and the accounts), field by field."""
    rows = {}
    for model in apps.get_models():
        if model._meta.app_label in APPS:
            rows[model._meta.label] = list(model.objects.order_by("pk").values())
    return rows


@override_settings(DEBUG=True)
def test_demo_setup_loads_every_app_and_a_second_run_changes_nothing():
    run()
    first = snapshot()
    run()
    assert snapshot() == first

    # problems
    assert Problem.objects.count() >= 6
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

    # rubrics: one approved valid scheme per problem (frozen once a grade points at it),
    # ProofBench features, ratings, a later draft
    in_use = (SchemeStatus.APPROVED, SchemeStatus.FROZEN)
    approved = MarkingScheme.objects.filter(status__in=in_use)
    assert approved.count() == Problem.objects.count() == 6
    assert all(s.is_valid and s.validation == [] for s in approved)
    schemes = [Scheme.from_dict(s.structure) for s in approved]
    assert any(len(s.chains) > 1 for s in schemes)
    assert any(cp.rule in ("max", "larger") for s in schemes for cp in s.all_checkpoints())
    assert all(s.zero_credit and s.deductions for s in schemes)
    assert SchemeRating.objects.count() == 6
    [draft] = MarkingScheme.objects.filter(status=SchemeStatus.DRAFT)
    assert draft.previous.status in in_use and draft.is_valid
    assert draft.previous.problem_id == draft.problem_id and draft.text != draft.previous.text

    # annotation: 18 items, 40% double-scored, each pinned to its approved scheme
    grading = Campaign.objects.get(slug=GRADING_SLUG)
    items = Item.objects.filter(campaign=grading)
    assert items.count() == 18
    assert items.filter(required_judgements=2).count() == 7
    assert not items.filter(scheme__isnull=True).exists()
    members = {(m.user.username, m.role) for m in grading.members.select_related("user")}
    assert {("expert1", "expert"), ("expert2", "expert"), ("adjudicator", "adjudicator")} <= members
    submitted = Grade.objects.filter(item__campaign=grading, status=GradeStatus.SUBMITTED)
    assert submitted.count() == 14
    assert all(g.computed_score is not None for g in submitted)
    # the careful grades (all but the two disagreeing and the one a point off) score each
    # proof as its demo rating, and mark the flawed passages
    ratings = [g.item.proof.metadata["ratings"][0]["value"] for g in submitted]
    assert sum(g.score == r for g, r in zip(submitted, ratings, strict=True)) == 11
    spans = ErrorSpan.objects.filter(grade__in=submitted).select_related("grade__item__proof")
    assert spans.exists()
    assert all(s.grade.item.proof.text[s.start : s.end] == s.quote for s in spans)
    review = Campaign.objects.get(slug=REVIEW_SLUG)
    assert review.task_kind == "analysis_review"
    assert Item.objects.filter(campaign=review, analysis__isnull=False).count() == 18
    reviews = MetaReview.objects.filter(grade__item__campaign=review).select_related("grade__item")
    assert [r.grade.score for r in reviews] == [1, 1]
    assert all(r.grade.item.proof.metadata["demo_quality"] == "correct" for r in reviews)
    assert FinalLabel.objects.filter(item__campaign=review, source="single").count() == 2

    # adjudication: labels of each kind, one resolved case and one open
    labels = FinalLabel.objects.filter(item__campaign=grading)
    assert {s: labels.filter(source=s).count() for s in ("agreement", "single", "adjudication")} == {
        "agreement": 3, "single": 3, "adjudication": 1,
    }  # fmt: skip
    cases = AdjudicationCase.objects.filter(item__campaign=grading)
    assert cases.filter(status=CaseStatus.RESOLVED).count() == 1
    [open_case] = cases.exclude(status=CaseStatus.RESOLVED)
    assert open_case.disagreement > grading.tolerance
    assert not open_case.item.is_final


@override_settings(DEBUG=True)
def test_each_role_finds_work_after_the_demo():
    run()
    grading = Campaign.objects.get(slug=GRADING_SLUG)
    expert1 = User.objects.get(username="expert1")
    expert2 = User.objects.get(username="expert2")
    first = assignment_next(campaign=grading, expert=expert1)
    assert first is not None and not first.item.is_final
    assert not Grade.objects.filter(item=first.item, expert=expert1).exists()
    # expert2 is offered the proof that expert1 graded and that waits for a second judgement
    second = assignment_next(campaign=grading, expert=expert2)
    assert second is not None
    assert list(second.item.grades.values_list("expert__username", flat=True)) == ["expert1"]
    [case] = cases_for_user(User.objects.get(username="adjudicator"))
    assert case.item.campaign == grading and case.status == CaseStatus.OPEN


@override_settings(DEBUG=True)
def test_demo_setup_prints_working_logins_and_where_to_start():
    output = run()
    logins = re.findall(r"^\s+(\S+)\s+(\S+)\s+(admin|expert|adjudicator|researcher)$", output, re.M)
    assert {name for name, _, _ in logins} == {
        "admin", "expert1", "expert2", "adjudicator", "researcher",
    }  # fmt: skip
    for username, password, role in logins:
        user = authenticate(
            RequestFactory().post("/accounts/login/"), username=username, password=password
        )
        assert user is not None, username
        assert Role(role) in user_roles(user)
    start = output.split("Where to start")[1]
    for username in ("admin", "expert1", "expert2", "adjudicator", "researcher"):
        assert re.search(rf"^\s+{username}\s+/", start, re.M), username
    run()
    assert authenticate(
        RequestFactory().post("/accounts/login/"),
        username="expert2",
        password=dict((n, p) for n, p, _ in logins)["expert2"],
    )


@override_settings(DEBUG=True)
def test_demo_setup_directions_name_the_experts_button(client):
    """An expert's directions end on the name of the button their grading page shows."""
    start = run().split("Where to start")[1]
    for username in ("expert1", "expert2"):
        line = re.search(rf"^\s+{username}\s+(.*)$", start, re.M).group(1)
        button = line.split(" -> ")[-1].split(" (")[0]
        client.force_login(User.objects.get(username=username))
        page = client.get("/annotation/").content.decode()
        assert f">{button}</button>" in page, (username, button)


@override_settings(DEBUG=False)
def test_demo_setup_refuses_demo_accounts_without_debug():
    with pytest.raises(CommandError, match="DEBUG is off"):
        call_command("demo_setup", stdout=StringIO())
    call_command("demo_setup", "--no-accounts", stdout=StringIO())
    assert Problem.objects.count() >= 6
    assert not authenticate(
        RequestFactory().post("/accounts/login/"), username="admin", password="admin-demo-pass"
    )
    assert not Campaign.objects.exists()


@override_settings(DEBUG=True)
def test_the_dashboard_counts_the_final_labels_the_export_writes(client, tmp_path):
    """The grading campaign's 7 labels (3 by agreement, 3 single, 1 adjudicated; only the last
    is fixed): the dashboard's "final labels" and the export's rows are the same 7."""
    run()
    out = tmp_path / "labels.jsonl"
    call_command(
        "export_dataset", "--campaign", GRADING_SLUG, "--format", "dv", "--file-type", "jsonl",
        "--out", str(out), stdout=StringIO(),
    )  # fmt: skip
    exported = len(out.read_text().splitlines())
    assert exported == FinalLabel.objects.filter(item__campaign__slug=GRADING_SLUG).count() == 7
    assert Item.objects.filter(campaign__slug=GRADING_SLUG, is_final=True).count() == 1
    client.force_login(User.objects.get(username="admin"))
    html = client.get(f"/annotation/{GRADING_SLUG}/").content.decode()
    assert f'<strong id="final-labels">{exported}</strong>' in html


@override_settings(DEBUG=True)
def test_keep_leaves_a_complete_demo_as_it_is_and_loads_an_unfinished_one():
    out = StringIO()
    call_command("demo_setup", "--keep", stdout=out)
    assert "Demo kept" not in out.getvalue()  # nothing to keep: loaded
    Grade.objects.filter(item__campaign__slug=GRADING_SLUG).update(comment="changed since")
    first = snapshot()
    out = StringIO()
    call_command("demo_setup", "--keep", stdout=out)
    assert "Demo kept as an earlier run left it" in out.getvalue()
    assert "expert1-demo-pass" in out.getvalue()  # the log-ins are still printed
    assert snapshot() == first
    AdjudicationCase.objects.filter(status=CaseStatus.RESOLVED).update(status=CaseStatus.OPEN)
    out = StringIO()
    call_command("demo_setup", "--keep", stdout=out)  # an unfinished demo is loaded to its end
    assert "Demo kept" not in out.getvalue()
    assert AdjudicationCase.objects.filter(status=CaseStatus.RESOLVED).exists()
