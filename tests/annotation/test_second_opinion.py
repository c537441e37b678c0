"""The AI second opinion, revealed only after the expert commits: the reveal, the one revision
with a reason (both scores kept, the label follows it), no anchoring before submission (page
and API), the page's panel and the API."""

from decimal import Decimal

import pytest

from adjudication.models import AdjudicationCase, FinalLabel
from annotation import services
from annotation.models import Grade, GradeRevision, Item, SecondOpinion
from graders.models import GraderEvaluation, GraderPrediction, JobStatus
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.problems.page_factories import VerifierAnalysisFactory

pytestmark = pytest.mark.django_db

# What only the automatic opinion holds: seen on the page or in the API before a submission,
# it would anchor the expert.
MARKER = "VERIFIER-SAYS-GAP-IN-LEMMA-2"
ANALYSIS = (
    f"Here is my evaluation of the solution: {MARKER}. The bound $a^2 + b^2 \\ge 2ab$ is "
    "fine but <script>alert(1)</script> the equality case is missing.\n\n"
    "Based on my evaluation, the final overall score should be: \\boxed{0.5}"
)


def grade(score="5") -> services.GradeInput:
    return services.GradeInput.from_data({"score": score, "comment": "ok"})


def setup(source="verifier", *, required=1, analyses=(("0.5", ANALYSIS), ("1", "All fine."))):
    campaign = CampaignFactory(second_opinion=source, tolerance=Decimal("1"))
    item = ItemFactory(campaign=campaign, required_judgements=required, scheme=None)
    for score, text in analyses:
        VerifierAnalysisFactory(proof=item.proof, score=Decimal(score), text=text)
    return campaign, item


def submitted(campaign, item, score="5", expert=None):
    expert = expert or expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    return expert, services.grade_submit(item=item, expert=expert, data=grade(score))


# ---- services --------------------------------------------------------------------------------


def test_off_by_default_reveals_nothing():
    campaign = CampaignFactory()
    assert campaign.second_opinion == ""
    item = ItemFactory(campaign=campaign, scheme=None)
    VerifierAnalysisFactory(proof=item.proof, score=Decimal("0"))
    _, graded = submitted(campaign, item)
    assert services.second_opinion_reveal(grade=graded) is None
    assert not SecondOpinion.objects.exists()


def test_reveal_records_committed_score_and_the_verifiers_opinion_once():
    campaign, item = setup()
    VerifierAnalysisFactory(proof=item.proof, score=None, text="cut off", kept_contract=False)
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    draft = services.grade_save_draft(item=item, expert=expert, data=grade("5"))
    assert services.second_opinion_reveal(grade=draft) is None  # not before the commitment
    graded = services.grade_submit(item=item, expert=expert, data=grade("5"))
    row = services.second_opinion_reveal(grade=graded)
    assert row.score_before == Decimal("5") and row.score_after is None
    assert row.score == Decimal("0.75") and row.scale == "0-0.5-1"  # mean of 0.5 and 1
    assert "mean of 2 scored analyses" in row.origin  # the failed sample is no opinion
    assert [a["score"] for a in row.analyses] == ["0.5", "1"]
    assert services.second_opinion_reveal(grade=graded).pk == row.pk
    assert SecondOpinion.objects.count() == 1


def test_revision_keeps_both_scores_once_with_a_reason(django_capture_on_commit_callbacks):
    campaign, item = setup()
    expert, graded = submitted(campaign, item, "5")
    services.second_opinion_reveal(grade=graded)
    with pytest.raises(services.SecondOpinionError, match="reason") as refused:
        services.second_opinion_revise(grade=graded, expert=expert, score="3", reason="  ")
    assert refused.value.status == 400 and refused.value.field == "reason"
    with pytest.raises(services.SecondOpinionError, match="score you submitted"):
        services.second_opinion_revise(grade=graded, expert=expert, score="5", reason="same")
    with pytest.raises(services.SecondOpinionError, match="not on the 0-7") as off_scale:
        services.second_opinion_revise(grade=graded, expert=expert, score="9", reason="x")
    assert off_scale.value.field == "score"
    row = services.second_opinion_revise(
        grade=graded, expert=expert, score="3", reason="I missed the gap in lemma 2."
    )
    assert (row.score_before, row.score_after) == (Decimal("5"), Decimal("3"))
    assert row.reason == "I missed the gap in lemma 2." and row.revised_at is not None
    assert Grade.objects.get(pk=graded.pk).score == Decimal("3")
    revision = GradeRevision.objects.get(grade=graded)
    assert (revision.old["score"], revision.new["score"]) == ("5", "3")
    # a double click sends the same revision again: the same answer, nothing new
    again = services.second_opinion_revise(
        grade=graded, expert=expert, score="3", reason="I missed the gap in lemma 2."
    )
    assert again.pk == row.pk and GradeRevision.objects.filter(grade=graded).count() == 1
    with pytest.raises(services.SecondOpinionError, match="one revision only") as twice:
        services.second_opinion_revise(grade=graded, expert=expert, score="4", reason="hmm")
    assert twice.value.status == 409
    assert Grade.objects.get(pk=graded.pk).score == Decimal("3")


def test_revision_refused_before_reveal_without_opinion_for_others_and_once_final():
    campaign, item = setup()
    expert, graded = submitted(campaign, item, "5")
    with pytest.raises(services.SecondOpinionError, match="submit your grade first"):
        services.second_opinion_revise(grade=graded, expert=expert, score="3", reason="x")
    services.second_opinion_reveal(grade=graded)
    other = expert_in(campaign)
    with pytest.raises(services.SecondOpinionError, match="Only the expert") as not_mine:
        services.second_opinion_revise(grade=graded, expert=other, score="3", reason="x")
    assert not_mine.value.status == 403
    services.item_finalize(item_id=item.pk)
    with pytest.raises(services.SecondOpinionError, match="final") as final:
        services.second_opinion_revise(grade=graded, expert=expert, score="3", reason="x")
    assert final.value.status == 409
    assert Grade.objects.get(pk=graded.pk).score == Decimal("5")

    bare_campaign, bare_item = setup(analyses=())
    bare_expert, bare_grade = submitted(bare_campaign, bare_item, "5")
    row = services.second_opinion_reveal(grade=bare_grade)
    assert not row.available and row.analyses == []
    with pytest.raises(services.SecondOpinionError, match="No automatic opinion existed"):
        services.second_opinion_revise(grade=bare_grade, expert=bare_expert, score="3", reason="x")


def test_ordinary_revision_goes_through_the_panel_after_the_reveal():
    campaign, item = setup()
    expert, graded = submitted(campaign, item, "5")
    services.grade_revise(grade=graded, user=expert, data=grade("4"))  # not revealed yet
    services.second_opinion_reveal(grade=graded)
    with pytest.raises(services.GradeError, match="second opinion panel"):
        services.grade_revise(grade=graded, user=expert, data=grade("2"))
    Item.objects.filter(pk=item.pk).update(judgements_visible=True)  # a case returned to talk
    services.grade_revise(grade=graded, user=expert, data=grade("2"))
    assert Grade.objects.get(pk=graded.pk).score == Decimal("2")


def test_the_label_follows_the_revised_score(django_capture_on_commit_callbacks):
    campaign, item = setup(required=2)
    first, first_grade = submitted(campaign, item, "6")
    second, second_grade = submitted(campaign, item, "2")
    case = AdjudicationCase.objects.get(item=item)  # 6 against 2: beyond the tolerance
    services.second_opinion_reveal(grade=second_grade)
    services.second_opinion_revise(
        grade=second_grade, expert=second, score="5", reason="The verifier found no gap."
    )
    case.refresh_from_db()
    assert (case.status, case.resolution) == ("resolved", "agreed")
    label = FinalLabel.objects.get(item=item)
    assert label.source == "agreement" and label.value == Decimal("5")  # mean of 6 and 5, floor

    single_campaign, single_item = setup()
    expert, alone = submitted(single_campaign, single_item, "7")
    assert FinalLabel.objects.get(item=single_item).value == Decimal("7")
    services.second_opinion_reveal(grade=alone)
    services.second_opinion_revise(grade=alone, expert=expert, score="4", reason="gap")
    assert FinalLabel.objects.get(item=single_item).value == Decimal("4")


def test_grader_evaluation_predictions_as_the_opinion():
    campaign, item = setup("grader", analyses=())
    evaluation = GraderEvaluation.objects.create(
        campaign=campaign, name="o3 REF+MS", source="proofgrader_jsonl", aggregation="median",
        status=JobStatus.SUCCEEDED,
    )  # fmt: skip
    for run, score in enumerate([2.0, 3.0, 6.0]):
        GraderPrediction.objects.create(
            evaluation=evaluation, item=item, run_index=run, score=score,
            assessment=f"Run {run}: {MARKER}", errors=["missing equality case"],
        )  # fmt: skip
    _, graded = submitted(campaign, item, "6")
    row = services.second_opinion_reveal(grade=graded)
    assert row.score == Decimal("3") and row.scale == "0-7"  # the median of 2, 3, 6
    assert row.origin == "grader o3 REF+MS (3 runs, median)"
    assert "missing equality case" in row.analyses[0]["text"]

    other_campaign, other_item = setup("grader", analyses=())
    other_campaign.second_opinion_from = "another grader"
    other_campaign.save()
    _, other_grade = submitted(other_campaign, other_item, "6")
    assert not services.second_opinion_reveal(grade=other_grade).available


def test_campaign_setting_is_checked():
    with pytest.raises(services.CampaignError, match="second_opinion"):
        services.campaign_create(
            name="Reviews", created_by=None, task_kind="analysis_review", scale="0-0.5-1",
            second_opinion="verifier",
        )  # fmt: skip
    with pytest.raises(services.CampaignError, match="second_opinion"):
        services.campaign_create(name="Bad", created_by=None, second_opinion="oracle")


# ---- no anchoring: nothing automatic before the submission -----------------------------------


def test_no_automatic_opinion_on_the_page_or_in_the_api_before_submission(client, api_client_for):
    campaign, item = setup()
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    client.force_login(expert)
    page = client.get(f"/annotation/items/{item.pk}/").content.decode()
    assert MARKER not in page and "All fine." not in page
    assert "second-opinion" not in page and "Automatic score" not in page
    api = api_client_for(expert)
    detail = api.get(f"/api/v1/items/{item.pk}/")
    assert detail.status_code == 200 and MARKER not in detail.content.decode()
    assert "second_opinion" not in detail.json()
    early = api.get(f"/api/v1/items/{item.pk}/second-opinion/")
    assert early.status_code == 409 and "Submit your grade first" in early.json()["detail"]
    panel = client.get(f"/annotation/items/{item.pk}/second-opinion/", HTTP_HX_REQUEST="true")
    assert panel.status_code == 409 and MARKER not in panel.content.decode()
    draft = api.put(f"/api/v1/items/{item.pk}/draft/", {"score": 5}, format="json")
    assert draft.status_code == 200 and MARKER not in draft.content.decode()
    assert not SecondOpinion.objects.exists()


# ---- the page ------------------------------------------------------------------------------


def test_page_submit_reveals_then_panel_revises_once(client):
    campaign, item = setup()
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    client.force_login(expert)
    answer = client.post(
        f"/api/v1/items/{item.pk}/submit/", {"score": "5"}, content_type="application/json"
    ).json()
    assert answer["second_opinion"]["automatic_score"] == "0.750"
    page = client.get(f"/annotation/items/{item.pk}/").content.decode()
    assert f'hx-get="/annotation/items/{item.pk}/second-opinion/"' in page
    assert 'id="revise-link"' not in page  # the panel's revision replaces the ordinary one
    url = f"/annotation/items/{item.pk}/second-opinion/"
    panel = client.get(url, HTTP_HX_REQUEST="true")
    html = panel.content.decode()
    assert panel.status_code == 200 and panel["Vary"].count("HX-Request")
    assert MARKER in html and "<script>alert(1)</script>" not in html
    assert '<span class="math' in html  # typeset by KaTeX in the browser, as elsewhere
    # the panel's revision goes through the API's operation, with the session
    api_url = f"/api/v1/items/{item.pk}/second-opinion/revise/"
    assert f'data-api-url="{api_url}"' in html
    assert client.post(url, {"revised_score": "3", "reason": "x"}).status_code == 405

    def revise(score, reason):
        return client.post(
            api_url, {"score": score, "reason": reason}, content_type="application/json"
        )

    refused = revise("3", "")
    assert refused.status_code == 400 and "say why" in refused.json()["reason"][0]
    assert revise("3", "Missed the gap.").status_code == 200
    body = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="score-after"' in body and "Missed the gap." in body
    assert 'id="second-opinion-form"' not in body
    second = revise("4", "again")
    assert second.status_code == 409 and "one revision only" in second.json()["detail"]
    assert revise("3", "Missed the gap.").status_code == 200  # a repeat
    assert client.get(url).status_code == 200


def test_panel_of_another_expert_is_their_own_or_nothing(client):
    campaign, item = setup(required=2)
    first, first_grade = submitted(campaign, item, "5")
    services.second_opinion_reveal(grade=first_grade)
    outsider = expert_in(campaign)
    client.force_login(outsider)
    url = f"/api/v1/items/{item.pk}/second-opinion/revise/"
    body = {"score": "3", "reason": "x"}
    assert client.post(url, body, content_type="application/json").status_code == 404
    assert client.get(f"/annotation/items/{item.pk}/second-opinion/").status_code == 404
    second = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=second)
    client.force_login(second)
    response = client.post(url, body, content_type="application/json")
    assert response.status_code == 409  # their own grade is not submitted: nothing revealed
    assert Grade.objects.get(pk=first_grade.pk).score == Decimal("5")


# ---- the API ---------------------------------------------------------------------------------


def test_api_submit_reveals_and_revise_endpoint(api_client_for):
    campaign, item = setup()
    expert = expert_in(campaign)
    api = api_client_for(expert)
    api.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    submit = api.post(f"/api/v1/items/{item.pk}/submit/", {"score": 5}, format="json").json()
    reveal = submit["second_opinion"]
    assert reveal["available"] and reveal["automatic_scale"] == "0-0.5-1"
    assert reveal["score_before"] == "5.00" and reveal["can_revise"]
    assert any(
        MARKER in analysis["text"] for analysis in reveal["analyses"]
    )  # sample keys sort as text
    url = f"/api/v1/items/{item.pk}/second-opinion/revise/"
    no_reason = api.post(url, {"score": 3, "reason": ""}, format="json")
    assert no_reason.status_code == 400 and "reason" in no_reason.json()
    bad_score = api.post(url, {"score": "x", "reason": "r"}, format="json")
    assert bad_score.status_code == 400 and "score" in bad_score.json()
    ok = api.post(url, {"score": 3, "reason": "Lemma 2 has a gap."}, format="json")
    assert ok.status_code == 200, ok.json()
    assert ok.json()["score_after"] == "3.00" and not ok.json()["can_revise"]
    again = api.post(url, {"score": 4, "reason": "no"}, format="json")
    assert again.status_code == 409 and "one revision only" in again.json()["detail"]
    read = api.get(f"/api/v1/items/{item.pk}/second-opinion/").json()
    assert read["score_before"] == "5.00" and read["score_after"] == "3.00"
    assert api.get(f"/api/v1/items/{item.pk}/").json()["grade"]["score"] == "3.00"
    stranger = api_client_for(expert_in(campaign))
    assert stranger.post(url, {"score": 2, "reason": "x"}, format="json").status_code == 404


def test_api_submit_answer_without_second_opinion_is_unchanged(api_client_for):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, scheme=None)
    api = api_client_for(expert_in(campaign))
    api.post(f"/api/v1/campaigns/{campaign.slug}/next/")
    body = api.post(f"/api/v1/items/{item.pk}/submit/", {"score": 5}, format="json").json()
    assert "second_opinion" not in body
    assert api.get(f"/api/v1/items/{item.pk}/second-opinion/").status_code == 404


# ---- cost ------------------------------------------------------------------------------------


def test_what_the_reveal_adds_to_the_submission_and_the_page(api_client_for, client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = {}
    for source in ("", "verifier"):
        campaign, item = setup(source)
        expert = expert_in(campaign)
        api = api_client_for(expert)
        api.post(f"/api/v1/campaigns/{campaign.slug}/next/")
        with CaptureQueriesContext(connection) as submit:
            body = api.post(f"/api/v1/items/{item.pk}/submit/", {"score": 5}, format="json")
        assert ("second_opinion" in body.json()) == bool(source)
        client.force_login(expert)
        with CaptureQueriesContext(connection) as page:
            assert client.get(f"/annotation/items/{item.pk}/").status_code == 200
        counts[source] = (len(submit), len(page))
    (submit_off, page_off), (submit_on, page_on) = counts[""], counts["verifier"]
    # the reveal: the existing-row check, the analyses, the insert (+ its savepoint)
    assert submit_on - submit_off <= 5
    assert page_on - page_off == 1  # whether the opinion was seen (the ordinary revision)


# ---- the setting -----------------------------------------------------------------------------

FORM = {
    "name": "Reveal pilot", "task_kind": "proof_grading", "scale": "0-7", "double_share": "0.4",
    "sample_seed": "1", "tolerance": "1", "label_policy": "mean_floor", "lease_minutes": "60",
    "gold_rate": "0", "fast_seconds": "60", "error_taxonomy": "", "guidelines": "",
    "status": "open",
}  # fmt: skip


def test_admin_sets_the_second_opinion_on_the_form_and_sees_it(client, admin_user, api_client_for):
    client.force_login(admin_user)
    off = client.post("/annotation/new/", FORM | {"name": "Plain pilot"})
    assert off.status_code == 302
    assert (
        client.get("/annotation/plain-pilot/").content.decode().count("second-opinion-setting") == 0
    )
    response = client.post(
        "/annotation/new/",
        FORM | {"second_opinion": "grader", "second_opinion_from": "o3 REF+MS"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    page = client.get("/annotation/reveal-pilot/").content.decode()
    assert "AI second opinion after submission: grader evaluation (o3 REF+MS)" in page
    bad = client.post(
        "/annotation/new/",
        FORM | {"name": "Review", "task_kind": "analysis_review", "scale": "0-0.5-1",
                "second_opinion": "verifier"},
    )  # fmt: skip
    assert bad.status_code == 200 and "only proof grading campaigns" in bad.content.decode()
    created = api_client_for(admin_user).post(
        "/api/v1/campaigns/", {"name": "API pilot", "second_opinion": "verifier"}, format="json"
    )
    assert created.status_code == 201 and created.json()["second_opinion"] == "verifier"
    refused = api_client_for(admin_user).post(
        "/api/v1/campaigns/", {"name": "API bad", "second_opinion": "oracle"}, format="json"
    )
    assert refused.status_code == 400 and "second_opinion" in refused.json()
