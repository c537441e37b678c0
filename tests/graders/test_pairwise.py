"""A grader's pairwise and knockout selection against the experts' pairs (graders/pairwise.py):
agreement with its Wilson interval (against scipy's), the knockout's bracket, and, on a
pairwise campaign, whether the knockout's winner is the experts' Bradley-Terry best; the page."""

import math

import pytest
from django.urls import reverse
from scipy.stats import binomtest

from annotation.services.pairs import pair_judgement_submit, pair_next
from graders.models import GraderEvaluation, GraderPrediction
from graders.pairwise import (
    knockout,
    pairwise_agreement,
    prefer_by_scores,
    prefer_from_picks,
    selection_against_pairs,
    wilson,
)
from tests.annotation.factories import CampaignFactory, ItemFactory
from tests.annotation.pair_factories import pairwise_campaign
from tests.factories import UserFactory

RANK = {"model-a": 3.0, "model-b": 2.0, "model-c": 1.0, "model-d": 0.0}


def test_wilson_interval_matches_scipy():
    for k, n in ((7, 10), (0, 5), (20, 20), (13, 31)):
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-9)
    assert all(math.isnan(v) for v in wilson(0, 0))


def test_agreement_counts_decided_pairs_and_grader_ties_as_half():
    human = [(1, 2, 1.0), (2, 3, 1.0), (1, 3, 0.0), (3, 4, 0.5), (4, 5, 1.0)]
    prefer = prefer_by_scores({1: 5.0, 2: 3.0, 3: 3.0, 4: 1.0})  # 5 unscored
    result = pairwise_agreement(human, prefer)
    # (1,2) agree; (2,3) grader tie: half; (1,3) disagree; (3,4) human tie; (4,5) missing
    assert (result.decided, result.agree, result.missing, result.compared) == (3, 1.5, 1, 4)
    assert result.rate == 0.5 and result.exact == 1
    picks = prefer_from_picks({(1, 2): 1.0, (3, 2): 1.0})
    assert picks(2, 1) == 0.0 and picks(2, 3) == 0.0 and picks(1, 3) is None


def test_knockout_winner_is_the_strongest_under_a_strict_order():
    prefer = prefer_by_scores({k: float(k) for k in range(7)})
    result = knockout(list(range(7)), prefer, seed=4)
    assert result.winner == 6 and result.coin_flips == 0
    assert [len(r) for r in result.rounds] == [3, 2, 1]  # 7 -> 4 (a bye) -> 2 -> 1
    flat = knockout([1, 2, 3, 4], prefer_by_scores({}), seed=1)
    assert flat.coin_flips == 3 and flat.winner in {1, 2, 3, 4}
    assert knockout([1, 2, 3, 4], prefer_by_scores({}), seed=1).winner == flat.winner  # seeded
    assert knockout([9], prefer).winner == 9
    with pytest.raises(ValueError):
        knockout([], prefer)


def _campaign_with_graders():
    """Two problems, four generators, experts who prefer by RANK; a grader that scores by RANK
    and one that scores against it, each over a grading campaign's items of the same proofs."""
    campaign, proofs, experts = pairwise_campaign(
        generators=("model-a", "model-b", "model-c", "model-d"), problems=2
    )
    generator = {p.pk: g for (_, g), p in proofs.items()}
    for expert in experts:
        while (j := pair_next(campaign=campaign, expert=expert)) is not None:
            a_better = RANK[generator[j.pair.proof_a_id]] > RANK[generator[j.pair.proof_b_id]]
            shown = "left" if a_better == j.a_on_left else "right"
            pair_judgement_submit(judgement_id=j.pk, expert=expert, shown=shown)
    grading = CampaignFactory()
    good = GraderEvaluation.objects.create(
        campaign=grading, name="good", source="proofgrader_jsonl"
    )
    bad = GraderEvaluation.objects.create(campaign=grading, name="bad", source="proofgrader_jsonl")
    for proof in proofs.values():
        item = ItemFactory(campaign=grading, proof=proof, scheme=None)
        for run in (0, 1):
            GraderPrediction.objects.create(
                evaluation=good, item=item, run_index=run, score=RANK[proof.generator] + run
            )
        GraderPrediction.objects.create(evaluation=bad, item=item, score=-RANK[proof.generator])
    return campaign, proofs, good, bad


@pytest.mark.django_db
def test_selection_against_the_human_pairs():
    from graders.pairwise import evaluation_scores

    campaign, proofs, good, bad = _campaign_with_graders()
    ids = [p.pk for p in proofs.values()]
    scores = evaluation_scores(good, ids)
    assert scores[proofs[0, "model-a"].pk] == 3.5  # the mean of its two runs
    report = selection_against_pairs(campaign, prefer_by_scores(scores), scores=scores)
    assert report.agreement.decided == 12 and report.agreement.rate == 1.0
    assert report.knockout_hits == 2 and report.pointwise_hits == 2
    best = {proofs[n, "model-a"].pk for n in (0, 1)}
    assert {p.human_best for p in report.problems} == best
    assert all("model-a" in p.human_best_label for p in report.problems)
    reverse_scores = evaluation_scores(bad, ids)
    worse = selection_against_pairs(
        campaign, prefer_by_scores(reverse_scores), scores=reverse_scores
    )
    assert worse.agreement.rate == 0.0 and worse.knockout_hits == 0
    assert all(p.knockout_score < 0 for p in worse.problems)  # the experts' worst proofs


@pytest.mark.django_db
def test_the_page_reports_and_refuses_a_blind_reader(client):
    campaign, _, good, _ = _campaign_with_graders()
    researcher = UserFactory(roles=["researcher"])
    client.force_login(researcher)
    url = reverse("exports:pairwise-selection", args=[campaign.slug])
    page = client.get(url).content.decode()
    assert "good" in page and "bad" in page
    report = client.get(url, {"evaluation": good.pk}).content.decode()
    assert 'id="knockout-hits">2 / 2' in report and "1.000" in report
    holder = UserFactory(roles=["researcher", "expert"])
    other, _, _ = pairwise_campaign(generators=("model-x", "model-y"))
    other.members.create(user=holder, role="expert")
    client.force_login(holder)
    assert client.get(reverse("exports:pairwise-selection", args=[other.slug])).status_code == 403
    client.force_login(UserFactory(roles=["expert"]))
    assert client.get(url).status_code == 403


@pytest.mark.django_db
def test_a_pairwise_judges_picks_file_is_compared(client):
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile

    from exports.formats import ExportOptions, plan_for

    campaign, _, _, _ = _campaign_with_graders()
    # the lab's pairwise judge answers over the exported pairs: here it agrees with the experts
    rows = {r["pair_id"]: r for r in plan_for("pairs", campaign, ExportOptions()).rows()}
    picks = [
        {k: r[k] for k in ("problem_id", "a_generator", "a_sample_key", "b_generator",
                           "b_sample_key")} | {"choice": r["final_choice"]}
        for r in rows.values()
    ]  # fmt: skip
    body = "\n".join(json.dumps(p) for p in picks).encode()
    client.force_login(UserFactory(roles=["researcher"]))
    url = reverse("exports:pairwise-selection", args=[campaign.slug])
    page = client.post(url, {"picks": SimpleUploadedFile("judge.jsonl", body)})
    text = page.content.decode()
    assert page.status_code == 200 and 'id="knockout-hits">2 / 2' in text and "judge.jsonl" in text
    csv_body = "problem_id,a_generator,a_sample_key,b_generator,b_sample_key,choice\n"
    first = picks[0]
    csv_body += ",".join(first[k] for k in list(first)[:5]) + ",sideways\n"
    bad = client.post(url, {"picks": SimpleUploadedFile("judge.csv", csv_body.encode())})
    assert bad.status_code == 400 and "judge.csv, line 2, field choice" in bad.content.decode()
    unknown = json.dumps(first | {"a_sample_key": "nope"}).encode()
    missing = client.post(url, {"picks": SimpleUploadedFile("j.jsonl", unknown)})
    assert missing.status_code == 400 and "line 1, field a_sample_key: no proof" in (
        missing.content.decode()
    )
    assert client.post(url, {}).status_code == 400
