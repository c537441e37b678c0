"""The manual's pandas join (docs/exports.md) of D_v, D_mv and the annotations export, run as written on exports of
a grading campaign and of an analysis review of one of its proofs (issue 23 item 2)."""

import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings

from annotation.models import Campaign, Item
from exports.formats import ExportOptions
from exports.services import dataset_write
from tests.exports.factories import grade, label, labelled_campaign
from tests.factories import UserFactory
from tests.problems.page_factories import VerifierAnalysisFactory, sha256

pytestmark = pytest.mark.django_db


def readme_join_code() -> str:
    readme = (Path(settings.BASE_DIR) / "docs" / "exports.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    return next(block for block in blocks if "dmv.merge(" in block)


def test_the_readmes_join_runs_on_real_exports(tmp_path, monkeypatch):
    pilot = labelled_campaign(slug="join-pilot")
    graded_proof = pilot.items[0].proof  # labelled 5 by agreement: 0.5 on D_v
    review = Campaign.objects.create(
        slug="join-review", name="Review", scale="0-0.5-1", task_kind="analysis_review",
        created_by=UserFactory(username="join-owner", roles=["admin"]),
    )  # fmt: skip
    analysis = VerifierAnalysisFactory(
        proof=graded_proof, verifier="dsm-v2", sample_key="3", score=Decimal(1),
        text="Complete.", text_hash=sha256("join analysis"),
    )  # fmt: skip
    item = Item.objects.create(campaign=review, proof=graded_proof, analysis=analysis)
    label(item, "0", "single", [grade(item, pilot.experts[0], "0")], "0-0.5-1")
    for campaign, fmt, name in (
        (pilot.campaign, "dv", "pilot-dv.jsonl"),
        (review, "dmv", "review-dmv.jsonl"),
        (pilot.campaign, "annotations", "pilot-annotations.jsonl"),
    ):
        dataset_write(
            campaign=campaign, fmt=fmt, file_type="jsonl", options=ExportOptions(),
            out=tmp_path / name,
        )  # fmt: skip
    monkeypatch.chdir(tmp_path)
    names: dict = {}
    exec(readme_join_code(), names)  # noqa: S102 - the README's own code, run as a reader would
    graded, reviewed = names["graded"], names["reviewed"]

    assert len(graded) == 4  # every judgement found its item's label
    first = graded[graded["item_id"] == pilot.items[0].pk]
    assert sorted(first["score"]) == [5.0, 6.0] and set(first["score_final"]) == {0.5}
    row = reviewed.iloc[0]
    assert (row["verifier"], row["verifier_sample"], row["meta_score"]) == ("dsm-v2", "3", 0.0)
    assert (row["score"], row["sample_key"]) == (0.5, "0")  # the proof's D_v label
