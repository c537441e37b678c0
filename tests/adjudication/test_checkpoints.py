"""Checkpoint analytics (adjudication.checkpoints): the statistics against scipy and krippendorff
on small fixed data; a campaign's figures per checkpoint (agreement, alpha, discrimination, each
with its interval; "too few double-scored proofs to say" where evidence is thin); the page and
its CSV."""

import csv
import io
import math
from decimal import Decimal

import krippendorff
import numpy as np
import pytest
from scipy import stats

from adjudication.agreement import krippendorff_alpha_ordinal, spearman
from adjudication.checkpoints import (
    CSV_COLUMNS,
    TOO_FEW_DOUBLE,
    bootstrap_ordinal_alpha,
    bootstrap_percent_agreement,
    bootstrap_spearman,
    campaign_checkpoint_figures,
    coincidence_rows,
    ordinal_alpha_rows,
    percent_agreement,
)
from annotation.models import Campaign, Item
from tests.annotation.factories import approved_scheme
from tests.exports.factories import grade, label
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory

UNITS = [[2, 2], [0, 0], [1, 2], [2, 2], [0, 1], [0, 0], [2, 2, 1], [1]]
LEVELS = [0, 1, 2]


def test_percent_agreement_counts_every_pair_of_a_proof():
    # pairs: 1,1,0,1,0,1, then (2,2) (2,1) (2,1): 1,0,0; the single value has none: 5 of 9
    assert percent_agreement(UNITS) == pytest.approx(5 / 9)
    assert percent_agreement([[1], [2]]) is None


def test_ordinal_alpha_matches_krippendorff():
    width = max(len(u) for u in UNITS)
    data = np.full((width, len(UNITS)), np.nan)
    for j, unit in enumerate(UNITS):
        data[: len(unit), j] = unit
    expected = krippendorff.alpha(
        reliability_data=data, level_of_measurement="ordinal", value_domain=LEVELS
    )
    assert krippendorff_alpha_ordinal(UNITS, LEVELS) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ([0, 1, 2, 2, 3, 0.5], [0, 0, 1, 1, 1, 0]),  # ties in both
        ([3, 1, 2, 5, 4], [1, 2, 3, 4, 5]),
        ([1.5, 1.5, 0, 2, 0], [7, 5, 0, 7, 1]),
    ],
)
def test_spearman_matches_scipy(x, y):
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-9)
    assert spearman([1, 1, 1], [0, 1, 2]) is None  # no spread: undefined, as scipy's nan
    assert math.isnan(stats.spearmanr([1, 1, 1], [0, 1, 2]).statistic)


def checkpoint_campaign() -> Campaign:
    """Two problems on the default scheme (c1 2 pts, c2 3 pts, c3 2 pts). Problem 1: 8 proofs,
    all labelled and double-scored: c1 both experts award 2 exactly on the good proofs (label
    7) and 0 on the bad (label 1): agreed and separating; c2 they award at odds (ambiguous);
    c3 always 2 (no spread). Problem 2: two double-scored proofs only."""
    campaign = Campaign.objects.create(
        slug="checkpoints", name="Checkpoints", scale="0-7",
        created_by=UserFactory(username="cp-owner", roles=["admin"]),
    )  # fmt: skip
    ann = UserFactory(username="cp-ann", roles=["expert"])
    bob = UserFactory(username="cp-bob", roles=["expert"])
    c2_ann, c2_bob = [0, 3, 1, 2, 3, 0, 2, 1], [3, 0, 2, 1, 0, 2, 1, 3]
    for n, problem in enumerate(
        (ProblemFactory(external_id="CP-1"), ProblemFactory(external_id="CP-2"))
    ):
        scheme = approved_scheme(problem)
        for k in range(8 if n == 0 else 2):
            good = k % 2 == 0
            item = Item.objects.create(
                campaign=campaign, proof=ProofFactory(problem=problem), scheme=scheme,
                required_judgements=2,
            )  # fmt: skip
            grades = []
            for expert, c2 in ((ann, c2_ann[k]), (bob, c2_bob[k])):
                awards = {"c1": "2" if good else "0", "c2": str(c2), "c3": "2"}
                grades.append(grade(item, expert, 7 if good else 1, awards=awards))
            label(item, Decimal(7 if good else 1), "agreement", grades)
    return campaign


@pytest.mark.django_db
def test_each_checkpoint_shows_its_agreement_and_discrimination_with_intervals():
    campaign = checkpoint_campaign()
    first, second = campaign_checkpoint_figures(campaign, n_resamples=200)
    assert (first.problem, first.proofs, first.double_scored, first.grades) == ("CP-1", 8, 8, 16)
    c1, c2, c3 = first.checkpoints
    assert [c.checkpoint_id for c in (c1, c2, c3)] == ["c1", "c2", "c3"]
    # c1: agreed on every proof, and it follows the label exactly
    assert c1.agreement == 1.0 and c1.alpha == pytest.approx(1.0)
    assert c1.discrimination == pytest.approx(1.0)
    assert c1.flags == ["few proofs: intervals rough"]  # 8 proofs: fewer than ROUGH_BELOW
    assert c1.agreement_ci == (1.0, 1.0)
    # c2: at odds, against the reference alpha, and flagged
    units = [
        [a, b] for a, b in zip([0, 3, 1, 2, 3, 0, 2, 1], [3, 0, 2, 1, 0, 2, 1, 3], strict=True)
    ]
    expected = krippendorff.alpha(
        reliability_data=np.array(units, dtype=float).T,
        level_of_measurement="ordinal",
        value_domain=[0, 1, 2, 3],
    )
    assert c2.agreement == 0.0 and c2.alpha == pytest.approx(expected, abs=1e-9)
    assert "ambiguous" in c2.flags
    low, high = c2.alpha_ci
    assert low <= c2.alpha <= high
    mean_award = [(a + b) / 2 for a, b in units]
    labels = [7 if k % 2 == 0 else 1 for k in range(8)]
    assert c2.discrimination == pytest.approx(stats.spearmanr(mean_award, labels).statistic)
    # c3: the same award everywhere: agreement total, alpha and correlation undefined
    assert c3.agreement == 1.0 and c3.alpha is None and c3.discrimination is None
    # problem 2: two double-scored proofs only
    assert all(c.agreement_note == TOO_FEW_DOUBLE and c.alpha is None for c in second.checkpoints)


@pytest.mark.django_db
def test_the_page_and_the_csv(client):
    campaign = checkpoint_campaign()
    client.force_login(UserFactory(username="cp-admin", roles=["admin"]))
    page = client.get(f"/adjudication/campaigns/{campaign.slug}/checkpoints/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "CP-1" in text and "ambiguous" in text and "too few double-scored proofs to say" in text
    response = client.get(f"/adjudication/campaigns/{campaign.slug}/checkpoints.csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert list(rows[0]) == [name for name, _ in CSV_COLUMNS]
    assert len(rows) == 6
    c2 = next(r for r in rows if r["problem"] == "CP-1" and r["checkpoint"] == "c2")
    assert (
        c2["flags"] == "ambiguous; few proofs: intervals rough; does not separate"
        and float(c2["percent_agreement"]) == 0.0
    )
    assert float(c2["alpha_lo"]) <= float(c2["alpha"]) <= float(c2["alpha_hi"])
    thin = next(r for r in rows if r["problem"] == "CP-2" and r["checkpoint"] == "c1")
    assert thin["alpha"] == "" and TOO_FEW_DOUBLE in thin["note"]
    # an expert may not read it
    client.force_login(UserFactory(username="cp-expert", roles=["expert"]))
    assert client.get(f"/adjudication/campaigns/{campaign.slug}/checkpoints/").status_code == 403


def test_the_numpy_bootstraps_agree_with_the_plain_ones():
    """The page's intervals (numpy: each resample adds up its proofs' parts) against
    adjudication.agreement's plain bootstraps on 60 fixed proofs: the same statistic at the
    full sample, intervals within sampling noise of each other."""
    import random

    from adjudication.agreement import bootstrap_alpha, bootstrap_ci

    rng = random.Random(3)
    units = []
    for _ in range(60):
        truth = rng.randint(0, 3)
        units.append([min(3, max(0, truth + rng.choice((-1, 0, 0, 1)))) for _ in range(2)])
    levels = [0, 1, 2, 3]
    rows = coincidence_rows(units, levels)
    assert ordinal_alpha_rows(rows.sum(axis=0, keepdims=True), 4)[0] == pytest.approx(
        krippendorff_alpha_ordinal(units, levels), abs=1e-12
    )
    for fast, plain in (
        (bootstrap_ordinal_alpha(units, levels), bootstrap_alpha(units, levels)),
        (bootstrap_percent_agreement(units), bootstrap_ci(units, percent_agreement)),
    ):
        assert fast == pytest.approx(plain, abs=0.05)
    x = [sum(u) / 2 for u in units]
    y = [u[0] + rng.random() for u in units]
    fast = bootstrap_spearman(x, y)
    plain = bootstrap_ci(list(zip(x, y, strict=True)), lambda p: spearman(*zip(*p, strict=True)))
    assert fast == pytest.approx(plain, abs=0.05)
    assert fast[0] <= spearman(x, y) <= fast[1]


@pytest.mark.django_db
def test_the_api_gives_the_pages_figures(api_client_for):
    campaign = checkpoint_campaign()
    client = api_client_for(UserFactory(username="cp-researcher", roles=["researcher"]))
    response = client.get(f"/api/v1/adjudication/campaigns/{campaign.slug}/checkpoints/")
    assert response.status_code == 200, response.content
    first, second = response.json()
    assert first["problem"] == "CP-1" and [c["checkpoint"] for c in first["checkpoints"]] == [
        "c1",
        "c2",
        "c3",
    ]
    c2 = first["checkpoints"][1]
    assert c2["percent_agreement"] == 0.0 and "ambiguous" in c2["flags"]
    assert len(c2["alpha_ci"]) == 2
    assert second["checkpoints"][0]["agreement_note"] == TOO_FEW_DOUBLE


@pytest.mark.django_db
def test_the_export_writes_the_checkpoints_file_with_its_manifest_entry_and_card(tmp_path):
    """A dataset export carries the checkpoint figures beside its data: a CSV with the page's
    rows, listed in the manifest (rows, checksum) and explained in the card; a campaign whose
    grades used no scheme writes none and the card says so."""
    import hashlib
    import json

    from exports.formats import ExportOptions
    from exports.services import dataset_write
    from exports.services.datasets import checkpoints_path, companion_paths
    from tests.annotation.factories import CampaignFactory, ItemFactory

    campaign = checkpoint_campaign()
    out = tmp_path / "dv.jsonl"
    manifest = dataset_write(
        campaign=campaign, fmt="dv", file_type="jsonl", options=ExportOptions(), out=out
    )
    path = checkpoints_path(out)
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert len(rows) == 6 and manifest["checkpoints"]["rows"] == 6  # 2 scheme versions x 3
    assert manifest["checkpoints"]["file"] == path.name == "dv.jsonl.checkpoints.csv"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert manifest["files"][path.name]["sha256"] == digest
    c1 = next(r for r in rows if r["problem"] == "CP-1" and r["checkpoint"] == "c1")
    assert float(c1["percent_agreement"]) == 1.0 and float(c1["discrimination"]) > 0.9
    c2 = next(r for r in rows if r["problem"] == "CP-1" and r["checkpoint"] == "c2")
    assert "ambiguous" in c2["flags"]
    assert next(r for r in rows if r["problem"] == "CP-2")["note"].startswith("too few")
    manifest_path, card_path = companion_paths(out)
    assert json.loads(manifest_path.read_text())["checkpoints"]["sha256"] == digest
    card = card_path.read_text()
    assert "## Checkpoints" in card and f"`{path.name}` (6 rows" in card
    assert "| `discrimination` |" in card

    plain = CampaignFactory(scale="0-7")
    ItemFactory(campaign=plain)  # no grade used a scheme
    other = tmp_path / "plain.jsonl"
    manifest = dataset_write(
        campaign=plain, fmt="dv", file_type="jsonl", options=ExportOptions(), out=other
    )
    assert manifest["checkpoints"] is None and not checkpoints_path(other).exists()
    assert "No checkpoints file" in companion_paths(other)[1].read_text()
