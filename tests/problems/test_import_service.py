"""The import service on the real PostgreSQL: every real fixture, idempotency, edits, dry runs,
<think> stripping, verifier scores, the signal and the formats' details."""

import shutil
import zipfile
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from problems.models import Problem, Proof, ReferenceSolution, VerifierAnalysis
from problems.services import corpus_import
from problems.signals import corpus_imported
from tests.problems.import_files import (
    analysis_text,
    generic_problem,
    generic_proof,
    proofbench_row,
    write_jsonl,
)

pytestmark = pytest.mark.django_db


def counts_of(report, model: str) -> tuple[int, int, int]:
    count = report.counts[model]
    return count["created"], count["updated"], count["unchanged"]


def snapshot() -> dict:
    return {
        model.__name__: dict(
            model.objects.values_list("id", "updated_at" if hasattr(model, "updated_at") else "id")
        )
        for model in (Problem, ReferenceSolution, Proof, VerifierAnalysis)
    }


# -- the real fixtures ---------------------------------------------------------------------

REAL = [
    # path under fixtures/real, (problems, reference solutions, proofs) created
    ("imobench/proofbench_v2.csv", (60, 60, 0)),
    ("deepseek_math_v2", (11, 3, 6)),
    ("matharena_usamo2025", (6, 6, 0)),
    ("opc", (8, 6, 9)),
    ("opc/train_discrete_long_test_sample.jsonl", (4, 2, 4)),
    ("opc/solved_USAMO_1997_5.json", (1, 1, 5)),
    ("opc/raw_problems_sample_first3.json", (3, 3, 0)),
    ("deepseek_math_v2/inputs_IMO2025.json", (6, 0, 0)),
    ("deepseek_math_v2/cmo2024_outputs_sample.jsonl", (1, 0, 1)),
]


@pytest.mark.parametrize(("relative", "expected"), REAL, ids=[path for path, _ in REAL])
def test_every_real_fixture_imports_with_its_counts_and_reimports_unchanged(
    real_fixtures, relative, expected
):
    report = corpus_import(path=real_fixtures / relative)
    assert report.ok, report.lines()
    created = (
        counts_of(report, "problems")[0],
        counts_of(report, "reference_solutions")[0],
        counts_of(report, "proofs")[0],
    )
    assert created == expected
    assert (Problem.objects.count(), ReferenceSolution.objects.count(), Proof.objects.count()) == (
        expected
    )
    before = snapshot()
    again = corpus_import(path=real_fixtures / relative)
    assert again.ok
    assert counts_of(again, "problems") == (0, 0, expected[0])
    assert counts_of(again, "reference_solutions") == (0, 0, expected[1])
    assert counts_of(again, "proofs") == (0, 0, expected[2])
    assert snapshot() == before


def test_imobench_keeps_guidelines_topic_and_answer(real_fixtures):
    corpus_import(path=real_fixtures / "imobench" / "proofbench_v2.csv")
    problem = Problem.objects.get(external_id="PB-Basic-001")
    assert (problem.contest, problem.topic, problem.number) == ("IMO-ProofBench", "A", "001")
    assert problem.final_answer.startswith("$f(x) = 0$")
    schemes = problem.metadata["imported_schemes"]
    assert [entry["format"] for entry in schemes] == ["imobench_guidelines"]
    assert schemes[0]["content"].startswith("(Partial)")
    assert schemes[0]["source"] == "imobench proofbench_v2.csv"
    assert problem.metadata["level"] == "IMO-easy"


def test_deepseek_ratings_keep_their_native_maximum(real_fixtures):
    corpus_import(path=real_fixtures / "deepseek_math_v2")
    ratings = {
        proof.problem.external_id: {r["kind"]: r for r in proof.metadata["imported_ratings"]}
        for proof in Proof.objects.select_related("problem")
    }
    assert (
        ratings["Putnam2024-B5"]["expert"]["value"],
        ratings["Putnam2024-B5"]["expert"]["max"],
    ) == (8, 10)
    assert (ratings["CMO2024-6"]["expert"]["value"], ratings["CMO2024-6"]["expert"]["max"]) == (
        9,
        21,
    )
    assert (ratings["IMO2025-6"]["expert"]["value"], ratings["IMO2025-6"]["expert"]["max"]) == (
        0,
        7,
    )
    assert ratings["IMO2025-6"]["automatic"] == {
        "source": "deepseek deepseek_math_v2/imo2025_outputs_sample.jsonl",
        "kind": "automatic",
        "value": 1,
        "max": 1,
        "raw": 1,
    }
    assert ratings["PB-Basic-002"]["expert"]["max"] == 7
    problem = Problem.objects.get(external_id="IMO2025-6")
    assert (problem.contest, problem.year, problem.number) == ("IMO", 2025, "6")
    assert Problem.objects.get(external_id="IMO2025-1").final_answer == "k = 0, 1, 3 for all n"
    assert Problem.objects.get(external_id="IMO2025-2").final_answer == ""


def test_the_same_problem_from_two_sources_is_one_problem_with_one_scheme(real_fixtures):
    corpus_import(path=real_fixtures / "imobench" / "proofbench_v2.csv")
    report = corpus_import(path=real_fixtures / "deepseek_math_v2")
    assert report.ok
    problem = Problem.objects.get(external_id="PB-Basic-002")
    assert problem.reference_solutions.count() == 1
    assert problem.proofs.count() == 1
    assert len(problem.metadata["imported_schemes"]) == 1
    assert Problem.objects.filter(external_id__startswith="PB-").count() == 60


def test_matharena_schemes_are_json_lists_per_problem(real_fixtures):
    corpus_import(path=real_fixtures / "matharena_usamo2025")
    problem = Problem.objects.get(external_id="USAMO-2025-P1")
    assert (problem.contest, problem.year, problem.number) == ("USAMO", 2025, "1")
    scheme = problem.metadata["imported_schemes"][0]
    assert scheme["format"] == "matharena_json"
    assert [item["points"] for item in scheme["content"]] == [1, 3, 2, 1]
    assert problem.reference_solutions.get().text.startswith("We claim")


def test_matharena_folder_imports_from_a_zip(real_fixtures, tmp_path):
    archive = tmp_path / "usamo_2025.zip"
    folder = real_fixtures / "matharena_usamo2025"
    with zipfile.ZipFile(archive, "w") as handle:
        for file in folder.rglob("*"):
            handle.write(file, f"usamo_2025/{file.relative_to(folder)}")
    report = corpus_import(path=archive)
    assert report.ok, report.lines()
    assert counts_of(report, "problems") == (6, 0, 0)
    assert Problem.objects.filter(external_id="USAMO-2025-P6").exists()


def test_opc_labels_and_human_error_spans(real_fixtures):
    corpus_import(path=real_fixtures / "opc")
    proof = Proof.objects.get(problem__external_id="bmo1_2010_5")
    assert proof.metadata["imported_ratings"][0] | {"source": ""} == {
        "source": "",
        "kind": "expert",
        "value": 1,
        "max": 1,
        "raw": "correct",
    }
    span = proof.metadata["imported_error_spans"][0]
    assert proof.text[span["start"] : span["end"]] == span["quote"]
    assert span["quote"] == "This must be true for any non-trivial solution."
    assert span["note"] == "This must be true for EVERy solution"
    wrong = Proof.objects.get(problem__external_id="bmo1_2021_3")
    assert wrong.metadata["imported_ratings"][0]["value"] == 0
    assert len(wrong.metadata["imported_error_spans"]) == 2
    solved = Problem.objects.get(external_id="USAMO_1997_5")
    assert solved.proofs.count() == 5
    assert solved.metadata["opc_grading_scheme"][0]["title"] == "Correctness"
    attempt = solved.proofs.get(generator="qwen/qwen3_235b_a22b")
    assert attempt.metadata["opc_llm_judgment"]["result"]["issues"]


# -- idempotency and edits -------------------------------------------------------------------


def test_reimport_changes_nothing_and_an_edited_proof_changes_exactly_that_proof(tmp_path):
    rows = [proofbench_row(index) for index in range(3)]
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    first = corpus_import(path=path)
    assert counts_of(first, "proofs") == (3, 0, 0)
    before = snapshot()
    again = corpus_import(path=path)
    assert counts_of(again, "problems") == (0, 0, 3)
    assert counts_of(again, "proofs") == (0, 0, 3)
    assert snapshot() == before

    rows[1]["model_solution"] = "Proof 1, revised: $(a-b)^2 \\ge 0$."
    write_jsonl(path, rows)
    edited = corpus_import(path=path)
    assert counts_of(edited, "proofs") == (0, 1, 2)
    assert counts_of(edited, "problems") == (0, 0, 3)
    assert counts_of(edited, "reference_solutions") == (0, 0, 3)
    after = snapshot()
    changed = [pk for pk, stamp in after["Proof"].items() if before["Proof"][pk] != stamp]
    assert [Proof.objects.get(pk=pk).text for pk in changed] == [rows[1]["model_solution"]]
    assert after["Problem"] == before["Problem"]


def test_batches_smaller_than_the_file_give_the_same_result(tmp_path):
    rows = [proofbench_row(index % 4, response_number=index) for index in range(10)]
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    report = corpus_import(path=path, batch_size=3)
    assert counts_of(report, "problems") == (4, 0, 0)
    assert counts_of(report, "proofs") == (10, 0, 0)
    again = corpus_import(path=path, batch_size=3)
    assert counts_of(again, "problems") == (0, 0, 4)
    assert counts_of(again, "proofs") == (0, 0, 10)


def test_dry_run_reports_the_counts_and_writes_nothing(tmp_path):
    path = write_jsonl(tmp_path / "rows.jsonl", [proofbench_row(index) for index in range(2)])
    report = corpus_import(path=path, dry_run=True)
    assert report.ok and not report.committed
    assert counts_of(report, "problems") == (2, 0, 0)
    assert counts_of(report, "proofs") == (2, 0, 0)
    assert "Dry run: nothing was written." in report.lines()
    assert Problem.objects.count() == Proof.objects.count() == 0


def test_signal_is_sent_after_commit_with_the_changed_problems(
    tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    received = []

    def receiver(sender, problem_ids, **kwargs):
        received.append(sorted(problem_ids))

    corpus_imported.connect(receiver)
    try:
        path = write_jsonl(tmp_path / "rows.jsonl", [proofbench_row(1), proofbench_row(2)])
        with django_capture_on_commit_callbacks(execute=True):
            corpus_import(path=path)
        with django_capture_on_commit_callbacks(execute=True):
            corpus_import(path=path, dry_run=True)
        with django_capture_on_commit_callbacks(execute=True):
            corpus_import(path=path)
    finally:
        corpus_imported.disconnect(receiver)
    assert received == [sorted(Problem.objects.values_list("id", flat=True))]

    from problems.services import corpus

    monkeypatch.setattr(corpus, "SIGNAL_CHUNK", 2)
    corpus_imported.connect(receiver)
    received.clear()
    try:
        rows = [proofbench_row(index, model_solution=f"Edited {index}") for index in (1, 2, 3)]
        with django_capture_on_commit_callbacks(execute=True):
            corpus_import(path=write_jsonl(tmp_path / "rows.jsonl", rows))
    finally:
        corpus_imported.disconnect(receiver)
    assert [len(ids) for ids in received] == [2, 1]
    assert sorted(sum(received, [])) == sorted(Problem.objects.values_list("id", flat=True))


# -- model text and verifier analyses -------------------------------------------------------


def test_think_blocks_are_stripped_from_model_text(tmp_path):
    row = proofbench_row(
        1, model_solution="<think>\nMaybe induction? No.\n</think>\n\nThe real proof: $x^2 \\ge 0$."
    )
    corpus_import(path=write_jsonl(tmp_path / "rows.jsonl", [row]))
    assert Proof.objects.get().text == "The real proof: $x^2 \\ge 0$."


def test_verifier_analyses_get_their_score_from_the_text(tmp_path):
    proof = generic_proof(
        analyses=[
            {"verifier": "v", "sample": "half", "text": analysis_text("\\frac12")},
            {
                "verifier": "v",
                "sample": "misspelt",
                "text": analysis_text("1", phrase="final overal score should be"),
            },
            {
                "verifier": "v",
                "sample": "think",
                "text": "<think>\\boxed{0}</think>" + analysis_text("0.5"),
            },
            {"verifier": "v", "sample": "none", "text": "Looks fine to me."},
            {"verifier": "v", "sample": "bad", "text": analysis_text("7")},
            # cut off while reasoning: the box inside the unfinished <think> is no score
            {
                "verifier": "v",
                "sample": "cut",
                "text": "<think>So \\boxed{1}? " + analysis_text("1"),
            },
            {"verifier": "v", "sample": "huge", "text": analysis_text("1") + " Again." * 40_000},
        ]
    )
    path = write_jsonl(tmp_path / "generic.jsonl", [generic_problem(), proof])
    report = corpus_import(path=path)
    assert report.ok, report.lines()
    scores = {a.sample_key: (a.score, a.kept_contract) for a in VerifierAnalysis.objects.all()}
    assert scores == {
        "half": (Decimal("0.5"), True),
        "misspelt": (Decimal("1"), True),
        "think": (Decimal("0.5"), True),
        "none": (None, False),
        "bad": (None, False),
        "cut": (None, False),
        "huge": (None, False),
    }
    assert "not 0, 0.5 or 1" in VerifierAnalysis.objects.get(sample_key="bad").score_problem
    assert "never closed" in VerifierAnalysis.objects.get(sample_key="cut").score_problem
    assert "over the limit" in VerifierAnalysis.objects.get(sample_key="huge").score_problem


def test_generic_format_problems_proofs_ratings_and_separate_analyses(tmp_path):
    lines = [
        generic_problem(),
        generic_proof(),
        {
            "kind": "analysis",
            "problem": "G-1",
            "generator": "model-b",
            "proof_sample": "0",
            "verifier": "deepseek-verifier",
            "text": analysis_text("0"),
        },
    ]
    report = corpus_import(path=write_jsonl(tmp_path / "corpus.jsonl", lines))
    assert report.ok, report.lines()
    problem = Problem.objects.get(external_id="G-1")
    assert (problem.topic, problem.year) == ("A", 2023)
    assert problem.metadata["imported_schemes"][0]["format"] == "proofbench_markdown"
    proof = Proof.objects.get()
    assert proof.metadata["imported_ratings"][0]["max"] == 7
    analysis = VerifierAnalysis.objects.get()
    assert analysis.score == Decimal("0") and len(analysis.sample_key) == 16
    again = corpus_import(path=write_jsonl(tmp_path / "corpus.jsonl", lines))
    assert counts_of(again, "analyses") == (0, 0, 1)


def test_proofs_may_refer_to_problems_already_in_the_database(tmp_path):
    corpus_import(path=write_jsonl(tmp_path / "a.jsonl", [generic_problem()]))
    report = corpus_import(path=write_jsonl(tmp_path / "b.jsonl", [generic_proof(sample="3")]))
    assert report.ok
    assert Proof.objects.get().sample_index == 3


def test_parquet_is_read_by_row_groups(tmp_path):
    rows = [proofbench_row(index) for index in range(5)]
    for row in rows:
        row["metadata"] = '{"contest": "Test MO", "contest_year": 2024}'
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=2)
    report = corpus_import(path=path)
    assert report.ok, report.lines()
    assert counts_of(report, "proofs") == (5, 0, 0)
    assert Problem.objects.get(external_id="T-004").year == 2024


def test_csv_proofbench_rows(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text(
        "problem_id,problem,model_solution,generator,expert_rating\n"
        'C-1,"Multi-line\nstatement $x$",Proof text,model-c,5\n',
        encoding="utf-8",
    )
    report = corpus_import(path=path)
    assert report.ok, report.lines()
    assert Problem.objects.get().statement == "Multi-line\nstatement $x$"
    assert Proof.objects.get().metadata["imported_ratings"][0]["value"] == 5


def test_unknown_columns_are_named_in_a_warning(tmp_path):
    row = proofbench_row(1, judge_notes="x", extra_flag=True)
    report = corpus_import(path=write_jsonl(tmp_path / "rows.jsonl", [row]))
    assert report.ok
    [issue] = report.issues
    assert issue["level"] == "warning"
    assert "extra_flag, judge_notes" in issue["message"]
    assert Proof.objects.count() == 1


def test_a_folder_of_files_detects_each_file(real_fixtures, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(real_fixtures / "opc" / "raw_problems_sample_first3.json", folder / "raw.json")
    write_jsonl(folder / "rows.jsonl", [proofbench_row(1)])
    report = corpus_import(path=folder)
    assert report.ok, report.lines()
    assert counts_of(report, "problems") == (4, 0, 0)


def test_records_ahead_keeps_order_passes_errors_on_and_stops_early():
    from problems.services.corpus import records_ahead

    assert list(records_ahead(iter(range(2500)), chunk=7, depth=2)) == list(range(2500))

    def broken():
        yield 1
        raise ValueError("reader broke")

    with pytest.raises(ValueError, match="reader broke"):
        list(records_ahead(broken()))
    consumed = records_ahead(iter(range(10**9)), chunk=10, depth=1)
    assert next(consumed) == 0
    consumed.close()


def test_imported_schemes_reach_the_rubrics_app_after_commit(
    real_fixtures, django_capture_on_commit_callbacks
):
    """The rubrics app turns `imported_schemes` into scheme versions on `corpus_imported`;
    importing again makes no second version."""
    from rubrics.models import MarkingScheme

    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            corpus_import(path=real_fixtures / "matharena_usamo2025")
    schemes = MarkingScheme.objects.filter(problem__external_id="USAMO-2025-P1")
    assert schemes.count() == 1
    assert schemes.get().is_valid
    assert MarkingScheme.objects.count() == 6


# -- licences of the sources -----------------------------------------------------------------

LICENSED = [
    # path under fixtures/real, the licence of the public dataset its format comes from
    ("imobench/proofbench_v2.csv", "CC-BY-4.0"),
    ("deepseek_math_v2/imo_proofbench_outputs_sample.jsonl", "Apache-2.0"),
    ("matharena_usamo2025", "MIT"),
    ("opc/solved_USAMO_1997_5.json", "Apache-2.0"),
]


@pytest.mark.parametrize(("relative", "licence"), LICENSED, ids=[path for path, _ in LICENSED])
def test_each_format_records_the_licence_of_its_public_dataset(real_fixtures, relative, licence):
    report = corpus_import(path=real_fixtures / relative)
    assert report.ok, report.lines()
    for model in (Problem, ReferenceSolution, Proof):
        assert {row.metadata.get("licence") for row in model.objects.all()} <= {licence}
    assert Problem.objects.exists()
    assert {p.metadata["licence"] for p in Problem.objects.all()} == {licence}


def test_a_licence_given_for_the_import_yields_to_the_records_own(tmp_path):
    lines = [
        generic_problem("G-1", metadata={"licence": "CC0-1.0"}),
        generic_problem("G-2"),
        generic_proof("G-2"),
    ]
    path = write_jsonl(tmp_path / "corpus.jsonl", lines)
    corpus_import(path=path)
    # Proofmark's own format assumes no licence.
    assert Problem.objects.get(external_id="G-2").metadata.get("licence") is None

    report = corpus_import(path=path, licence="CC-BY-SA-4.0")
    assert report.ok, report.lines()
    assert Problem.objects.get(external_id="G-1").metadata["licence"] == "CC0-1.0"
    assert Problem.objects.get(external_id="G-2").metadata["licence"] == "CC-BY-SA-4.0"
    assert Proof.objects.get().metadata["licence"] == "CC-BY-SA-4.0"


def test_a_proofbench_row_keeps_its_own_licence_column(tmp_path):
    rows = [proofbench_row(1, licence="CC-BY-NC-4.0"), proofbench_row(2)]
    report = corpus_import(path=write_jsonl(tmp_path / "rows.jsonl", rows))
    assert report.ok and not report.issues, report.lines()
    licences = dict(Proof.objects.values_list("problem__external_id", "metadata__licence"))
    assert licences == {"T-001": "CC-BY-NC-4.0", "T-002": "MIT"}
    assert Problem.objects.get(external_id="T-001").metadata["licence"] == "CC-BY-NC-4.0"
