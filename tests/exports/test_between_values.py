"""Labels between scale values (the mean policy: 3.5 on 0-7, 1.5 on 1-4, 0.75 on 0 / 0.5 / 1)
through every conversion, export format and file type, and the grader evaluation; with the
judgement counts, manifests and licences of the exported files."""

import csv
import json
from decimal import Decimal

import orjson
import pyarrow.parquet as pq
import pytest

from adjudication.agreement import apply_policy
from adjudication.models import FinalLabel
from annotation import scales
from annotation.models import Campaign, Item
from exports.formats import ExportError, ExportOptions
from exports.services import companion_paths, dataset_write
from graders.services.evaluation_import import evaluation_import
from problems.models import Proof
from problems.services import corpus_import
from tests.exports.factories import grade, proof, reviewed_campaign
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory

D = Decimal


# --- The conversions themselves (no database) ------------------------------------------------


@pytest.mark.parametrize(
    ("value", "scale", "on_0_7", "ternary"),
    [
        ("3.5", "0-7", "3.5", "0"),
        ("6.5", "0-7", "6.5", "0.5"),  # halfway between 6 and 7: the lower, 6 -> 0.5
        ("4.5", "0-7", "4.5", "0"),  # halfway between 4 and 5: 4 -> 0
        ("6.67", "0-7", "6.67", "1"),  # nearer 7
        ("5", "0-7", "5", "0.5"),
        ("1.5", "1-4", "2.0", "0"),  # 2x - 1 keeps the number
        ("3.5", "1-4", "6.0", "0.5"),
        ("3.75", "1-4", "6.5", "0.5"),
        ("4", "1-4", "7", "1"),
        ("0.75", "0-0.5-1", None, "0.5"),  # halfway between 0.5 and 1: the lower
        ("0.25", "0-0.5-1", None, "0"),
        ("0.83", "0-0.5-1", None, "1"),
    ],
)
def test_every_scale_converts_labels_between_its_values(value, scale, on_0_7, ternary):
    if on_0_7 is None:
        with pytest.raises(scales.ScaleError, match="no map onto 0-7"):
            scales.to_0_7(value, scale)
    else:
        assert scales.to_0_7(value, scale) == D(on_0_7)
    assert scales.ternary_of(value, scale) == D(ternary)
    assert scales.ternary_of(float(value), scale) == D(ternary)


def test_labels_outside_the_scale_are_refused_and_judgements_stay_on_it():
    for value, scale in (("7.5", "0-7"), ("0.5", "1-4"), ("-0.5", "0-0.5-1")):
        with pytest.raises(scales.ScaleError, match="outside"):
            scales.ternary_of(value, scale)
    with pytest.raises(scales.ScaleError, match="not on the"):
        scales.check_value("3.5", "0-7")
    assert scales.shown(D("0.50")) == "0.5" and scales.shown(D("1.0")) == "1"
    assert scales.shown(D("10")) == "10"


# --- Every policy x scale x format x file type -----------------------------------------------

# Two judgements per item, chosen so that the mean falls between scale values.
JUDGEMENTS = {
    "0-7": [(3, 4), (6, 7), (4, 5), (7, 7)],
    "1-4": [(1, 2), (3, 4), (2, 2)],
    "0-0.5-1": [(D("0.5"), 1), (0, D("0.5")), (1, 1)],
}
# policy -> scale -> (expected label, proofbench expert_rating on 0-7 or None, dv score)
EXPECTED = {
    "mean": {
        "0-7": [("3.5", 3.5, 0), ("6.5", 6.5, 0.5), ("4.5", 4.5, 0), ("7", 7.0, 1)],
        "1-4": [("1.5", 2.0, 0), ("3.5", 6.0, 0.5), ("2", 3.0, 0)],
        "0-0.5-1": [("0.75", None, 0.5), ("0.25", None, 0), ("1", None, 1)],
    },
    "mean_floor": {
        "0-7": [("3", 3, 0), ("6", 6, 0.5), ("4", 4, 0), ("7", 7, 1)],
        "1-4": [("1", 1, 0), ("3", 5, 0.5), ("2", 3, 0)],
        "0-0.5-1": [("0.5", None, 0.5), ("0", None, 0), ("1", None, 1)],
    },
    "lower": {
        "0-7": [("3", 3, 0), ("6", 6, 0.5), ("4", 4, 0), ("7", 7, 1)],
        "1-4": [("1", 1, 0), ("3", 5, 0.5), ("2", 3, 0)],
        "0-0.5-1": [("0.5", None, 0.5), ("0", None, 0), ("1", None, 1)],
    },
}


def policy_campaign(scale: str, policy: str, slug: str = "between") -> Campaign:
    """One problem, one proof per judgement pair, each labelled by `policy` (agreement)."""
    owner = UserFactory(username=f"{slug}-owner", roles=["admin"])
    campaign = Campaign.objects.create(
        slug=slug, name="Between", scale=scale, label_policy=policy, created_by=owner
    )
    experts = [UserFactory(username=f"{slug}-e{i}", roles=["expert"]) for i in range(2)]
    problem = ProblemFactory(external_id=f"{slug.upper()}-1", statement="Prove it.")
    for index, pair in enumerate(JUDGEMENTS[scale]):
        item = Item.objects.create(
            campaign=campaign,
            proof=proof(problem, "model-a", index, f"Proof {index}."),
            required_judgements=2,
        )
        grades = [grade(item, expert, score) for expert, score in zip(experts, pair, strict=True)]
        value, how = apply_policy(pair, policy, scales.SCALES[scale].values)
        FinalLabel.objects.create(
            item=item,
            value=value,
            scale=scale,
            source="agreement",
            policy=how,
            grade_ids=[g.pk for g in grades],
        )
    return campaign


def read_all(out, file_type):
    if file_type == "jsonl":
        return [json.loads(line) for line in out.read_text().splitlines()]
    if file_type == "csv":
        return list(csv.DictReader(out.open()))
    return pq.read_table(out).to_pylist()


def by_proof(rows, key="proof"):
    return [row for _, row in sorted((row[key], row) for row in rows)]


@pytest.mark.django_db
@pytest.mark.parametrize("scale", ["0-7", "1-4", "0-0.5-1"])
@pytest.mark.parametrize("policy", ["mean", "mean_floor", "lower"])
def test_every_policy_scale_and_format_exports_between_values(tmp_path, scale, policy):
    campaign = policy_campaign(scale, policy)
    expected = EXPECTED[policy][scale]
    labels = sorted(
        FinalLabel.objects.filter(item__campaign=campaign).values_list("item__proof__text", "value")
    )
    assert [value for _, value in labels] == [D(label) for label, _, _ in expected]
    fractional = any(rating is not None and rating % 1 for _, rating, _ in expected)

    for file_type in ("jsonl", "csv", "parquet"):
        # proofbench: ratings on 0-7, one column type for every row and file
        if scale == "0-0.5-1":
            with pytest.raises(ExportError, match="no map onto 0-7"):
                dataset_write(
                    campaign=campaign,
                    fmt="proofbench",
                    file_type=file_type,
                    options=ExportOptions(),
                    out=tmp_path / f"pb.{file_type}",
                )
        else:
            out = tmp_path / f"pb.{file_type}"
            manifest = dataset_write(
                campaign=campaign,
                fmt="proofbench",
                file_type=file_type,
                options=ExportOptions(),
                out=out,
            )
            kind = {c["name"]: c["type"] for c in manifest["columns"]}["expert_rating"]
            assert kind == ("float" if policy == "mean" else "int")
            rows = by_proof(read_all(out, file_type), "model_solution")
            ratings = [row["expert_rating"] for row in rows]
            if file_type == "csv":
                assert all(("." in r) == (kind == "float") for r in ratings), ratings
                ratings = [float(r) for r in ratings]
            else:
                assert {type(r) for r in ratings} == {float if kind == "float" else int}
            assert ratings == [rating for _, rating, _ in expected]
            assert fractional <= (kind == "float")
            assert [int(row["judgements"]) for row in rows] == [2] * len(expected)

        # dv: the score on 0 / 0.5 / 1 by the stated rule, the label itself beside it
        out = tmp_path / f"dv.{file_type}"
        manifest = dataset_write(
            campaign=campaign, fmt="dv", file_type=file_type, options=ExportOptions(), out=out
        )
        rows = by_proof(read_all(out, file_type))
        assert [float(row["score"]) for row in rows] == [score for _, _, score in expected]
        assert [float(row["native_score"]) for row in rows] == [float(x) for x, _, _ in expected]
        between = any(D(x) not in scales.SCALES[scale].values for x, _, _ in expected)
        described = " ".join(c["description"] for c in manifest["conversions"])
        assert ("halfway as the lower" in described) == (scale != "0-0.5-1" or between)

        # annotations: every judgement on the scale, the final label beside it
        out = tmp_path / f"ann.{file_type}"
        dataset_write(
            campaign=campaign,
            fmt="annotations",
            file_type=file_type,
            options=ExportOptions(),
            out=out,
        )
        rows = read_all(out, file_type)
        assert len(rows) == 2 * len(expected)
        finals = {float(row["final_label"]) for row in rows}
        assert finals == {float(x) for x, _, _ in expected}


@pytest.mark.django_db
def test_dmv_puts_a_mean_meta_score_on_the_scale_and_says_so(tmp_path):
    corpus = reviewed_campaign()
    FinalLabel.objects.filter(item=corpus.items[0]).update(value=D("0.75"))
    for file_type in ("jsonl", "csv", "parquet"):
        out = tmp_path / f"dmv.{file_type}"
        manifest = dataset_write(
            campaign=corpus.campaign,
            fmt="dmv",
            file_type=file_type,
            options=ExportOptions(),
            out=out,
        )
        scores = sorted(float(row["meta_score"]) for row in read_all(out, file_type))
        assert scores == [0.5, 0.5]
        assert "meta_score: a label between two values" in manifest["conversions"][0]["description"]


@pytest.mark.django_db
def test_the_rating_column_keeps_its_type_whatever_the_filters(tmp_path):
    """A mean_floor campaign with one imported label of 3.5: every file of it rates in floats,
    also a file the filter leaves without that label."""
    campaign = policy_campaign("0-7", "mean_floor")
    FinalLabel.objects.filter(item__campaign=campaign, value=D("6")).update(
        value=D("6.5"), source="imported"
    )
    for sources in ([], ["agreement"]):
        out = tmp_path / f"pb-{len(sources)}.parquet"
        dataset_write(
            campaign=campaign,
            fmt="proofbench",
            file_type="parquet",
            options=ExportOptions.from_dict({"label_sources": sources}),
            out=out,
        )
        table = pq.read_table(out)
        assert str(table.schema.field("expert_rating").type) == "double"
        assert (6.5 in table.column("expert_rating").to_pylist()) == (not sources)


# --- Grader evaluation on every scale --------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("scale", "comparison", "row_of_first", "mae"),
    [
        # 0-7: labels 3.5, 6.5, 4.5, 7 against 3, 7, 5, 7: |0.5| each but the last
        ("0-7", "0-7", 3, (0.5 + 0.5 + 0.5 + 0) / 4),
        # 1-4: labels 1.5, 3.5, 2 -> 2, 6, 3 on 0-7 against 3, 7, 5
        ("1-4", "0-7", 2, (1 + 1 + 2) / 3),
        # 0/0.5/1: predictions 0-7 go onto 0/0.5/1; labels 0.75, 0.25, 1 -> 0.5, 0, 1
        ("0-0.5-1", "0-1", 1, None),
    ],
)
def test_evaluation_accepts_expert_labels_between_values(scale, comparison, row_of_first, mae):
    campaign = policy_campaign(scale, "mean")
    researcher = UserFactory(username="res-between", roles=["researcher"])
    predictions = [3, 7, 5, 7][: len(JUDGEMENTS[scale])]
    data = b"".join(
        orjson.dumps(
            {
                "problem_id": "BETWEEN-1",
                "generator": "model-a",
                "response_number": index,
                "score": score,
            }
        )
        + b"\n"
        for index, score in enumerate(predictions)
    )
    report = evaluation_import(
        user=researcher,
        campaign=campaign,
        name="grader",
        source="proofgrader_jsonl",
        data=data,
    ).report
    assert report["comparison_scale"] == comparison
    assert report["labelled_proofs"] == len(predictions)
    matrix = report["confusion_matrix"]
    assert sum(map(sum, matrix)) == len(predictions)
    # the first label (3.5, 2.0 or 0.75) sits in the row of the nearest category, halfway lower
    assert sum(matrix[row_of_first]) >= 1
    if mae is not None:
        assert report["proofbench"]["mae"] == pytest.approx(mae)
        # within-1 uses the label itself: 3 is within 1 of 3.5
        assert report["proofbench"]["within_1"] == pytest.approx(1.0 if scale == "0-7" else 2 / 3)
    else:
        # predictions 3, 7, 5 -> 0, 1, 0.5 against labels 0.5, 0, 1
        assert matrix == [[0, 0, 1], [1, 0, 0], [0, 1, 0]]


# --- Counts, manifests, licences -------------------------------------------------------------


@pytest.mark.django_db
def test_an_accepted_judgement_still_counts_both(tmp_path):
    campaign = policy_campaign("0-7", "mean_floor")
    label = FinalLabel.objects.filter(item__campaign=campaign).first()
    label.source, label.grade_ids = "adjudication", label.grade_ids[:1]
    label.save()
    out = tmp_path / "pb.jsonl"
    dataset_write(
        campaign=campaign,
        fmt="proofbench",
        file_type="jsonl",
        options=ExportOptions.from_dict({"label_sources": ["adjudication"]}),
        out=out,
    )
    (row,) = read_all(out, "jsonl")
    assert (row["label_source"], row["judgements"]) == ("adjudication", 2)


@pytest.mark.django_db
def test_one_stem_in_three_file_types_leaves_three_truthful_manifests(tmp_path):
    campaign = policy_campaign("0-7", "mean")
    for file_type in ("jsonl", "csv", "parquet"):
        dataset_write(
            campaign=campaign,
            fmt="dv",
            file_type=file_type,
            options=ExportOptions(),
            out=tmp_path / f"pilot.{file_type}",
        )
    for file_type in ("jsonl", "csv", "parquet"):
        data = tmp_path / f"pilot.{file_type}"
        manifest_path, card_path = companion_paths(data)
        manifest = json.loads(manifest_path.read_text())
        assert manifest["file_type"] == file_type
        assert set(manifest["files"]) == {data.name, card_path.name}
        assert manifest["files"][data.name]["size"] == data.stat().st_size
        assert f"`{data.name}`" in card_path.read_text()
    assert len(list(tmp_path.glob("*.manifest.json"))) == 3


@pytest.mark.django_db
@pytest.mark.parametrize("file_type", ["jsonl", "csv", "parquet"])
def test_reimported_export_keeps_its_licence_column_and_adds_none(tmp_path, file_type):
    campaign = policy_campaign("0-7", "mean")
    Proof.objects.filter(text="Proof 1.").update(metadata={"licence": "CC0-1.0"})
    out = tmp_path / f"pb.{file_type}"
    dataset_write(
        campaign=campaign,
        fmt="proofbench",
        file_type=file_type,
        options=ExportOptions(),
        out=out,
    )
    Campaign.objects.all().delete()
    Proof.objects.all().delete()
    report = corpus_import(path=out, fmt="proofbench")
    assert report.ok, report
    licences = dict(Proof.objects.values_list("text", "metadata__licence"))
    assert licences == {"Proof 0.": None, "Proof 1.": "CC0-1.0", "Proof 2.": None, "Proof 3.": None}
    assert not any("Unknown" in str(issue) for issue in report.issues)
