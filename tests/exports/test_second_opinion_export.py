"""The annotations export of a campaign with an AI second opinion: both scores, the reason, the
automatic score and whether the reveal happened, in JSONL, CSV and Parquet."""

import csv
import json
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from annotation import services
from exports.formats import ExportOptions
from exports.services import dataset_write
from tests.annotation.factories import CampaignFactory, ItemFactory, expert_in
from tests.problems.page_factories import VerifierAnalysisFactory

pytestmark = pytest.mark.django_db

COLUMNS = [
    "second_opinion_revealed",
    "second_opinion_source",
    "automatic_score",
    "automatic_scale",
    "automatic_origin",
    "score_before_reveal",
    "score_after_reveal",
    "revision_reason",
]


def submit(campaign, item, score):
    expert = expert_in(campaign)
    services.assignment_next(campaign=campaign, expert=expert)
    data = services.GradeInput.from_data({"score": score})
    return expert, services.grade_submit(item=item, expert=expert, data=data)


def campaign_with_reveals():
    campaign = CampaignFactory(second_opinion="verifier", slug="reveal-pilot")
    revised, kept, unseen = (ItemFactory(campaign=campaign, scheme=None) for _ in range(3))
    for item in (revised, kept, unseen):
        VerifierAnalysisFactory(proof=item.proof, score=Decimal("0.5"), verifier="dsm-v2")
    expert, grade = submit(campaign, revised, "7")
    services.second_opinion_reveal(grade=grade)
    services.second_opinion_revise(
        grade=grade, expert=expert, score="5", reason='Gap in "lemma 2", =cell'
    )
    _, kept_grade = submit(campaign, kept, "5")
    services.second_opinion_reveal(grade=kept_grade)
    submit(campaign, unseen, "6")  # submitted before the panel loaded: nothing revealed yet
    return campaign


def write(campaign, file_type, tmp_path):
    out = tmp_path / f"annotations.{file_type}"
    manifest = dataset_write(
        campaign=campaign,
        fmt="annotations",
        file_type=file_type,
        options=ExportOptions.from_dict({}),
        out=out,
    )
    return out, manifest


def test_jsonl_carries_both_scores_the_reason_and_the_reveal(tmp_path):
    campaign = campaign_with_reveals()
    out, manifest = write(campaign, "jsonl", tmp_path)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3
    assert [c["name"] for c in manifest["columns"]][-len(COLUMNS) :] == COLUMNS
    revised = next(r for r in rows if r["score_after_reveal"] is not None)
    assert revised["score"] == 5.0  # the expert's judgement is the revised score
    assert (revised["score_before_reveal"], revised["score_after_reveal"]) == (7.0, 5.0)
    assert revised["revision_reason"] == 'Gap in "lemma 2", =cell'
    assert revised["second_opinion_revealed"] is True
    assert revised["automatic_score"] == 0.5 and revised["automatic_scale"] == "0-0.5-1"
    assert revised["second_opinion_source"] == "verifier"
    assert "dsm-v2" in revised["automatic_origin"]
    assert revised["history"][0]["old"]["score"] == "7"
    kept = next(r for r in rows if r["second_opinion_revealed"] and r["score_after_reveal"] is None)
    assert (kept["score"], kept["score_before_reveal"], kept["revision_reason"]) == (5.0, 5.0, "")
    unseen = next(r for r in rows if r["score"] == 6.0)
    assert unseen["second_opinion_revealed"] is False and unseen["automatic_score"] is None


def test_csv_and_parquet_hold_the_same_columns(tmp_path):
    campaign = campaign_with_reveals()
    csv_out, _ = write(campaign, "csv", tmp_path)
    rows = list(csv.DictReader(csv_out.open()))
    reasons = [row["revision_reason"] for row in rows if row["revision_reason"]]
    assert reasons == ['Gap in "lemma 2", =cell']
    parquet_out, _ = write(campaign, "parquet", tmp_path)
    table = pq.read_table(parquet_out)
    assert set(COLUMNS) <= set(table.column_names)
    assert sorted(v for v in table.column("score_before_reveal").to_pylist() if v) == [5.0, 7.0]
    assert table.column("second_opinion_revealed").to_pylist().count(True) == 2


def test_campaign_without_second_opinion_keeps_its_columns(tmp_path):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, scheme=None)
    submit(campaign, item, "4")
    _, manifest = write(campaign, "jsonl", tmp_path)
    assert not set(COLUMNS) & {c["name"] for c in manifest["columns"]}
