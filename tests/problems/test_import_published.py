"""The field's data as it is published (issue 36): human-graded sets with their ratings
(IMO-GradingBench, MathArena's graded outputs, ProofBench-shaped files with expert columns) and
Parquet or Arrow (a `datasets` save_to_disk folder) wherever rows are read. Every file is
written here in the shape of the published one, in our own words."""

import csv
import io
import json
import zipfile
from decimal import Decimal

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from adjudication.models import FinalLabel
from adjudication.services import imported_ratings_materialise
from annotation.models import Campaign, CampaignStatus, Grade, Item
from problems.importers import detect_format
from problems.models import Problem, Proof, ReferenceSolution
from problems.services import corpus_import
from tests.problems.import_files import proofbench_row, write_jsonl

pytestmark = pytest.mark.django_db

GRADINGBENCH_COLUMNS = [
    "Grading ID",
    "Problem ID",
    "Problem",
    "Solution",
    "Grading guidelines",
    "Response",
    "Points",
    "Reward",
    "Problem Source",
]
GUIDELINES = "(Partial)\n 1. Proved that $f$ is injective.\n(Almost)\n 1. Minor slip at the end."


def gradingbench_rows() -> list[dict]:
    def row(grading, problem, points, reward, response):
        return {
            "Grading ID": grading,
            "Problem ID": problem,
            "Problem": f"Find all $f:\\mathbb{{R}}\\to\\mathbb{{R}}$ with property {problem}.",
            "Solution": "Put $x = y = 0$; then $f(0) = 0$, and so on.",
            "Grading guidelines": GUIDELINES,
            "Response": response,
            "Points": points,
            "Reward": reward,
            "Problem Source": "(Modified) Test MO 2020 P1",
        }

    return [
        row("GB-0001", "PB-Basic-901", 7, "Correct", "**Proof.** Setting $x=0$ gives\n$f(0)=0$."),
        row("GB-0002", "PB-Basic-901", 1, "Partial", "We show $f$ is injective, then stop."),
        row("GB-0003", "PB-Advanced-902", 0, "Incorrect", "By symmetry the answer is $2$."),
    ]


def write_csv(path, columns, rows):
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def counts_of(report, model: str) -> tuple[int, int, int]:
    count = report.counts[model]
    return count["created"], count["updated"], count["unchanged"]


# -- IMO-GradingBench ---------------------------------------------------------------------


def test_gradingbench_csv_imports_proofs_with_points_and_reward(tmp_path):
    path = write_csv(tmp_path / "gradingbench.csv", GRADINGBENCH_COLUMNS, gradingbench_rows())
    assert detect_format(path) == "gradingbench"
    report = corpus_import(path=path)
    assert report.ok, report.lines()
    assert not report.issues, report.lines()  # no unknown-column warning
    assert (counts_of(report, "problems")[0], counts_of(report, "proofs")[0]) == (2, 3)
    proof = Proof.objects.get(sample_key="GB-0002")
    [rating] = proof.metadata["imported_ratings"]
    assert (rating["kind"], rating["value"], rating["max"], rating["label"]) == (
        "expert",
        1,
        7,
        "Partial",
    )
    assert proof.generator == "unknown"
    problem = Problem.objects.get(external_id="PB-Basic-901")
    assert problem.metadata["imported_schemes"][0]["format"] == "imobench_guidelines"
    assert problem.metadata["original_source"] == "(Modified) Test MO 2020 P1"
    assert problem.metadata["licence"] == "CC-BY-4.0"
    assert ReferenceSolution.objects.count() == 2
    again = corpus_import(path=path)
    assert counts_of(again, "proofs") == (0, 0, 3)


def test_gradingbench_ratings_land_in_the_closed_imported_campaign(
    tmp_path, django_capture_on_commit_callbacks
):
    path = write_csv(tmp_path / "gradingbench.csv", GRADINGBENCH_COLUMNS, gradingbench_rows())
    with django_capture_on_commit_callbacks(execute=True):
        corpus_import(path=path)  # the schemes and the labels follow the commit
    assert FinalLabel.objects.count() == 3
    [campaign] = Campaign.objects.filter(slug__startswith="imported-gradingbench")
    assert campaign.status == CampaignStatus.CLOSED
    labels = {
        label.item.proof.sample_key: (label.value, label.native_value, label.native_max)
        for label in FinalLabel.objects.select_related("item__proof")
    }
    assert labels["GB-0001"] == (Decimal(7), Decimal(7), Decimal(7))
    assert labels["GB-0002"][0] == Decimal(1)
    # each rating is pinned to the guidelines it was given under
    item = campaign.items.get(proof__sample_key="GB-0003")
    assert item.scheme is not None and item.scheme.text.startswith("(Partial)")


def test_gradingbench_reward_alone_gives_its_points_and_a_bad_reward_names_its_line(tmp_path):
    rows = gradingbench_rows()
    rows[0]["Points"] = ""
    rows[0]["Reward"] = "Almost"
    rows[2]["Reward"] = "Half right"
    path = write_csv(tmp_path / "gb.csv", GRADINGBENCH_COLUMNS, rows)
    report = corpus_import(path=path)
    assert Proof.objects.get(sample_key="GB-0001").metadata["imported_ratings"][0]["value"] == 6
    [bad] = [issue for issue in report.issues if issue["level"] == "error"]
    lines = path.read_text(encoding="utf-8").split("\n")
    starts = next(n for n, line in enumerate(lines, start=1) if line.startswith("GB-0003"))
    assert (bad["file"], bad["line"], bad["field"]) == ("gb.csv", starts, "Reward")
    assert "'Half right' is not one of Correct, Almost, Partial, Incorrect" in bad["message"]


def test_gradingbench_as_parquet_is_detected_by_content(tmp_path):
    path = tmp_path / "gradingbench-train.data"  # no telling suffix: the bytes say Parquet
    pq.write_table(pa.Table.from_pylist(gradingbench_rows()), path, row_group_size=2)
    assert detect_format(path) == "gradingbench"
    report = corpus_import(path=path)
    assert report.ok, report.lines()
    assert Proof.objects.count() == 3


# -- MathArena graded outputs --------------------------------------------------------------


def matharena_output(problem_idx, model, idx, judge_points):
    row = {
        "problem_idx": problem_idx,
        "problem": f"Prove statement number {problem_idx} about $n$.",
        "model_name": model,
        "model_config": f"{model}.yaml",
        "idx_answer": idx,
        "user_message": "Give a thorough answer.",
        "answer": f"<think>scratch</think>Proof for {problem_idx}: induct on $n$.",
        "input_tokens": 120,
        "output_tokens": 900,
        "cost": 0.01,
        "input_cost_per_tokens": 1.0,
        "output_cost_per_tokens": 4.0,
    }
    for judge, points in enumerate(judge_points, start=1):
        row[f"points_judge_{judge}"] = points
        row[f"max_points_judge_{judge}"] = 7
        row[f"error_judge_{judge}"] = None
        row[f"grading_details_judge_{judge}"] = [
            {
                "title": "Base case",
                "points": min(points, 1),
                "max_points": 1,
                "desc": f"Judge {judge}: the base case is checked.",
                "grading_scheme_desc": "Checks n = 1.",
            },
            {
                "title": "Induction step",
                "points": max(points - 1, 0),
                "max_points": 6,
                "desc": f"Judge {judge}: the step skips the even case.",
                "grading_scheme_desc": "Shows n to n + 1.",
            },
        ]
    return row


def test_matharena_outputs_parquet_keeps_each_judges_points_and_comments(tmp_path):
    folder = tmp_path / "usamo_2025_outputs" / "data"
    folder.mkdir(parents=True)
    path = folder / "train-00000-of-00001.parquet"
    rows = [
        matharena_output("1", "model-a", 0, [7, 6]),
        matharena_output("1", "model-a", 1, [2, 3]),
        matharena_output("2", "model-b", 0, [0, 0]),
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert detect_format(path) == "matharena_outputs"
    report = corpus_import(path=tmp_path / "usamo_2025_outputs")
    assert report.ok, report.lines()
    assert not [issue for issue in report.issues if "Unknown column" in issue["message"]]
    proof = Proof.objects.get(problem__external_id="USAMO-2025-P1", sample_key="1")
    assert proof.generator == "model-a" and proof.text.startswith("Proof for 1")
    first, second = proof.metadata["imported_ratings"]
    assert (first["value"], first["max"], second["value"]) == (2, 7, 3)
    assert "Judge 1: the step skips the even case." in first["comment"]
    assert first["details"][0]["title"] == "Base case"
    imported_ratings_materialise()
    grades = Grade.objects.filter(item__proof=proof).order_by("expert__username")
    assert [grade.score for grade in grades] == [Decimal(2), Decimal(3)]
    assert "Judge 2: the base case is checked." in grades[1].comment
    label = FinalLabel.objects.get(item__proof=proof)
    assert label.value == Decimal("2.5")


def test_matharena_outputs_without_a_competition_name_are_refused_clearly(tmp_path):
    path = write_jsonl(tmp_path / "rows.jsonl", [matharena_output("1", "m", 0, [7])])
    report = corpus_import(path=path, fmt="matharena_outputs")
    [issue] = report.issues
    assert issue["file"] == "rows.jsonl"
    assert "Cannot tell the competition" in issue["message"]


# -- ProofBench-shaped files with expert columns -------------------------------------------


def test_proofbench_shaped_rows_with_expert_columns_keep_each_rating_and_its_native_max(
    tmp_path,
):
    rows = []
    for index in range(2):
        row = proofbench_row(index, expert_max=10, human_rating_a=8, human_rating_b=6)
        del row["expert_rating"]
        rows.append(row)
    report = corpus_import(path=write_jsonl(tmp_path / "rows.jsonl", rows))
    assert report.ok and not report.issues, report.lines()
    ratings = Proof.objects.get(problem__external_id="T-000").metadata["imported_ratings"]
    assert [(r["value"], r["max"], r["column"]) for r in ratings] == [
        (8, 10, "human_rating_a"),
        (6, 10, "human_rating_b"),
    ]
    assert imported_ratings_materialise().labels == 2
    label = FinalLabel.objects.get(item__proof__problem__external_id="T-000")
    assert (label.native_value, label.native_max) == (Decimal(7), Decimal(10))


def test_an_expert_column_above_its_maximum_names_line_and_column(tmp_path):
    row = proofbench_row(1, expert_max=10, expert_score=11)
    del row["expert_rating"]
    report = corpus_import(path=write_jsonl(tmp_path / "rows.jsonl", [row]))
    [issue] = report.issues
    assert (issue["line"], issue["field"], issue["message"]) == (
        1,
        "expert_score",
        "11 is outside 0-10.",
    )


# -- Parquet and Arrow wherever rows are read ----------------------------------------------


def opc_row(index: int, label: str) -> dict:
    return {
        "problem_id": f"OPC-T-{index}",
        "metadata": {"source": "Test MO", "year": 2021},
        "solutions": [{"solution": "Reference: pair the terms.", "author": "setter"}],
        "grading_scheme": None,
        "model_id": "model-o",
        "timestamp": f"2025-01-0{index + 1}T10:00:00",
        "annotations": [],
        "llm_judgment": None,
        "reward_model": {"ground_truth": label, "style": "rule"},
        "prompt": [
            {
                "role": "user",
                "content": "Judge this.\n### Problem Statement:\nShow that $2 \\mid n(n+1)$."
                f"\n### Model Solution:\nOne of $n, n+1$ is even ({index}).",
            }
        ],
        "extra_info": {"split": "test", "index": index},
        "data_source": "opc",
        "ability": "math",
    }


def stored() -> list[tuple]:
    return sorted(
        Proof.objects.values_list(
            "problem__external_id", "generator", "sample_key", "sample_index", "text", "metadata"
        )
    )


def test_opc_parquet_imports_exactly_as_its_jsonl(tmp_path):
    rows = [opc_row(0, "correct"), opc_row(1, "incorrect"), opc_row(2, "incorrect")]
    corpus_import(path=write_jsonl(tmp_path / "test.jsonl", rows))
    from_jsonl = [(*row[:5], row[5]["imported_ratings"][0]["value"]) for row in stored()]
    Proof.objects.all().delete()
    Problem.objects.all().delete()
    path = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=1)
    assert detect_format(path) == "opc"
    report = corpus_import(path=path)
    assert report.ok, report.lines()
    from_parquet = [(*row[:5], row[5]["imported_ratings"][0]["value"]) for row in stored()]
    assert from_parquet == from_jsonl
    assert [row[3] for row in from_parquet] == [None, None, None]  # no response number: null


def test_a_datasets_save_to_disk_folder_imports_and_so_does_its_zip(tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = [proofbench_row(index) for index in range(4)]
    for row in rows:
        row["metadata"] = json.dumps(row["metadata"])
    folder = tmp_path / "saved"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder), max_shard_size="1KB")
    assert sorted(p.name for p in folder.iterdir() if p.suffix != ".arrow") == [
        "dataset_info.json",
        "state.json",
    ]
    report = corpus_import(path=folder)
    assert report.ok, report.lines()
    assert not report.issues, report.lines()
    assert counts_of(report, "proofs") == (4, 0, 0)
    archive = tmp_path / "saved.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for file in folder.iterdir():
            bundle.write(file, f"saved/{file.name}")
    again = corpus_import(path=archive)
    assert again.ok, again.lines()
    assert counts_of(again, "proofs")[0] == 0  # the same proofs (their source names the zip)


def test_an_arrow_ipc_file_and_a_parquet_named_jsonl_are_read_by_their_bytes(tmp_path):
    table = pa.Table.from_pylist(
        [proofbench_row(1, metadata=None), proofbench_row(2, metadata=None)]
    )
    arrow = tmp_path / "rows.arrow"
    with ipc.new_file(arrow, table.schema) as writer:
        writer.write_table(table, max_chunksize=1)
    disguised = tmp_path / "rows.jsonl"
    pq.write_table(table, disguised)
    for path in (arrow, disguised):
        assert detect_format(path) == "proofbench"
        report = corpus_import(path=path)
        assert report.ok, report.lines()
    assert Proof.objects.count() == 2


def test_a_broken_arrow_file_is_one_clear_error_naming_it(tmp_path):
    path = tmp_path / "data-00000-of-00001.arrow"
    path.write_bytes(b"\xff\xff\xff\xff\x10\x00\x00\x00not arrow at all")
    report = corpus_import(path=path, fmt="proofbench")
    [issue] = report.issues
    assert issue["file"] == "data-00000-of-00001.arrow"
    assert "Not a readable Arrow file" in issue["message"]


# -- nothing changed on the way through ----------------------------------------------------


@pytest.mark.parametrize("file_type", ["jsonl", "csv", "parquet"])
def test_a_null_response_number_stays_null_through_export_and_reimport(tmp_path, file_type):
    from exports.formats import ExportOptions
    from exports.services import dataset_write

    rows = [opc_row(0, "correct"), opc_row(1, "incorrect")]
    corpus_import(path=write_jsonl(tmp_path / "test.jsonl", rows))
    assert list(Proof.objects.values_list("sample_index", flat=True)) == [None, None]
    campaign = Campaign.objects.create(slug="nulls", name="Nulls")
    for proof in Proof.objects.order_by("id"):
        FinalLabel.objects.create(
            item=Item.objects.create(campaign=campaign, proof=proof),
            value=Decimal(7),
            scale="0-7",
            source="imported",
            policy="tests",
        )
    out = tmp_path / f"labels.{file_type}"
    dataset_write(
        campaign=campaign, fmt="proofbench", file_type=file_type, options=ExportOptions(), out=out
    )
    before = stored()
    Campaign.objects.all().delete()
    Problem.objects.all().delete()
    report = corpus_import(path=out, fmt="proofbench")
    assert report.ok, report.lines()
    assert [row[:5] for row in stored()] == [row[:5] for row in before]
    assert list(Proof.objects.values_list("sample_index", flat=True)) == [None, None]


def test_a_problem_id_repeated_in_a_file_is_a_warning_naming_both_lines(tmp_path):
    from tests.problems.import_files import generic_problem

    lines = [
        generic_problem("G-1"),
        generic_problem("G-2"),
        generic_problem("G-1", statement="Another statement entirely."),
    ]
    report = corpus_import(path=write_jsonl(tmp_path / "corpus.jsonl", lines))
    [issue] = report.issues
    assert (issue["level"], issue["file"], issue["line"]) == ("warning", "corpus.jsonl", 3)
    assert "problem 'G-1' repeats the id of line 1 (corpus.jsonl:1)" in issue["message"]
    assert Problem.objects.count() == 2


def test_rows_repeating_their_problem_warn_only_when_the_statement_differs(tmp_path):
    rows = [
        proofbench_row(1, generator="model-a"),
        proofbench_row(1, generator="model-b"),
        proofbench_row(1, generator="model-c", problem="A changed statement."),
    ]
    report = corpus_import(path=write_jsonl(tmp_path / "rows.jsonl", rows))
    [issue] = report.issues
    assert issue["line"] == 3
    assert "repeats, with another statement, the id of line 1" in issue["message"]


def test_the_door_reads_the_first_row_of_a_parquet_or_arrow_upload(api_client_for, admin_user):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    def upload(name, table, stream=False):
        sink = io.BytesIO()
        if name.endswith(".parquet"):
            pq.write_table(table, sink)
        else:
            with (ipc.new_stream if stream else ipc.new_file)(sink, table.schema) as writer:
                writer.write_table(table)
        return api_client_for(admin_user).post(
            reverse("api-import-create"),
            {"file": SimpleUploadedFile(name, sink.getvalue())},
            format="multipart",
        )

    unknown = pa.Table.from_pylist([{"question": "q", "notes": "n"}])
    refused = upload("rows.parquet", unknown)
    assert refused.status_code == 400
    assert "Cannot tell the format from the first row" in str(refused.data["file"][0])
    graded = pa.Table.from_pylist(gradingbench_rows())
    assert upload("gradingbench.parquet", graded).status_code == 202
    assert upload("data-00000-of-00001.arrow", graded, stream=True).status_code == 202
    broken = api_client_for(admin_user).post(
        reverse("api-import-create"),
        {"file": SimpleUploadedFile("x.arrow", b"ARROW1\x00\x00garbage")},
        format="multipart",
    )
    assert broken.status_code == 400
    assert "Not a readable Arrow file" in str(broken.data["file"][0])


def test_a_grader_is_evaluated_against_the_gradingbench_ratings(
    tmp_path, admin_user, django_capture_on_commit_callbacks
):
    from graders.services.evaluation_import import evaluation_import

    path = write_csv(tmp_path / "gradingbench.csv", GRADINGBENCH_COLUMNS, gradingbench_rows())
    with django_capture_on_commit_callbacks(execute=True):
        corpus_import(path=path)
    [campaign] = Campaign.objects.filter(slug__startswith="imported-gradingbench")
    predictions = [
        {"problem_id": "PB-Basic-901", "generator": "unknown", "sample_key": "GB-0001", "score": 7},
        {"problem_id": "PB-Basic-901", "generator": "unknown", "sample_key": "GB-0002", "score": 3},
        {
            "problem_id": "PB-Advanced-902",
            "generator": "unknown",
            "sample_key": "GB-0003",
            "score": 0,
        },
    ]
    evaluation = evaluation_import(
        user=admin_user,
        campaign=campaign,
        name="grader-x",
        source="proofgrader_jsonl",
        data="".join(json.dumps(p) + "\n" for p in predictions).encode(),
    )
    assert evaluation.predictions.count() == 3
    assert evaluation.report, "the evaluation has a report against the imported labels"


def test_the_real_opc_rows_as_parquet_import_as_their_jsonl(real_fixtures, tmp_path):
    source = real_fixtures / "opc" / "train_discrete_long_test_sample.jsonl"
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    corpus_import(path=source)
    from_jsonl = [(*row[:5], row[5].get("imported_ratings")) for row in stored()]
    spans = sorted(
        json.dumps(p.metadata.get("imported_error_spans"), sort_keys=True)
        for p in Proof.objects.all()
    )
    Proof.objects.all().delete()
    Problem.objects.all().delete()
    path = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=2)
    assert detect_format(path) == "opc"
    report = corpus_import(path=path)
    assert report.ok, report.lines()
    from_parquet = [(*row[:5], row[5].get("imported_ratings")) for row in stored()]
    assert [r[:5] for r in from_parquet] == [r[:5] for r in from_jsonl]
    assert [[x["value"] for x in r[5]] for r in from_parquet] == [
        [x["value"] for x in r[5]] for r in from_jsonl
    ]
    assert (
        sorted(
            json.dumps(p.metadata.get("imported_error_spans"), sort_keys=True)
            for p in Proof.objects.all()
        )
        == spans
    )


def test_a_competition_folder_beside_its_graded_outputs_imports_both(tmp_path):
    competition = tmp_path / "bundle" / "usamo_2025"
    (competition / "problems").mkdir(parents=True)
    (competition / "solutions").mkdir()
    for number in ("1", "2"):
        (competition / "problems" / f"{number}.tex").write_text(
            f"Prove statement number {number} about $n$.", encoding="utf-8"
        )
        (competition / "solutions" / f"{number}.tex").write_text("By induction.", "utf-8")
    scheme = [{"title": "Base case", "points": 1, "desc": "n = 1"}]
    (competition / "grading_scheme.json").write_text(
        json.dumps([{"id": n, "points": 7, "scheme": scheme} for n in ("1", "2")]), "utf-8"
    )
    outputs = tmp_path / "bundle" / "usamo_2025_outputs"
    outputs.mkdir()
    rows = [matharena_output("1", "model-a", 0, [5, 6]), matharena_output("2", "model-a", 0, [0])]
    pq.write_table(pa.Table.from_pylist(rows), outputs / "train.parquet")
    report = corpus_import(path=tmp_path / "bundle")
    assert report.ok and not report.issues, report.lines()
    assert sorted(f["format"] for f in report.formats) == ["matharena", "matharena_outputs"]
    problem = Problem.objects.get(external_id="USAMO-2025-P1")
    assert problem.metadata["imported_schemes"][0]["format"] == "matharena_json"
    assert problem.proofs.get().metadata["imported_ratings"][1]["value"] == 6
