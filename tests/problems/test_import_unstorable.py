"""A character the database cannot store (NUL in text or in a JSON string, a lone surrogate, bytes
that are not UTF-8): an upload holding one is refused at the door with its lines (issue 37),
unless the uploader chooses to import the rest; then, as in the command, it fails its record
alone, in every format: an error naming the file, the line and the field, every other record
imported, the report stored."""

import json
from io import StringIO

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from problems.models import ImportJob, Problem, Proof, ReferenceSolution, VerifierAnalysis
from problems.services import corpus_import, import_job_run
from tests.problems.import_files import generic_problem, generic_proof, proofbench_row

pytestmark = pytest.mark.django_db

NUL = "\x00"
LEFT_OUT = "were not imported; every other record was."


def lines(*rows) -> bytes:
    """JSON Lines; a row given as bytes is written as it is."""
    return b"".join(
        (row if isinstance(row, bytes) else json.dumps(row).encode()) + b"\n" for row in rows
    )


def proofbench_with(index: int, **bad) -> dict:
    return proofbench_row(index, **bad)


def deepseek_output(idx: str, proof: str) -> dict:
    return {
        "problem_idx": idx,
        "question": f"Show that {idx} holds.",
        "model_prediction": {"proof": proof, "human_rating": 5},
    }


def opc_train(key: str, proof: str) -> dict:
    return {
        "problem_id": f"O-{key}",
        "model_id": "model-o",
        "timestamp": key,
        "reward_model": {"ground_truth": "correct"},
        "prompt": [
            {"content": f"### Problem Statement:\nShow {key}.\n### Model Solution:\n{proof}"}
        ],
    }


def matharena_folder(root, bad_statement: str):
    folder = root / "usamo_2031"
    (folder / "problems").mkdir(parents=True)
    for number, statement in (("1", "Prove that $1 < 2$."), ("2", bad_statement)):
        (folder / "problems" / f"{number}.tex").write_text(statement, encoding="utf-8")
    (folder / "grading_scheme.json").write_text(
        json.dumps([{"id": n, "points": 7, "scheme": []} for n in ("1", "2")]), encoding="utf-8"
    )
    return folder


def write(tmp_path, name: str, content: bytes):
    path = tmp_path / name
    path.write_bytes(content)
    return path


# Each case: a file with good records around one bad one; the error (line, field, words) and the
# problems imported.
CASES = {
    "proofbench jsonl, NUL escape in the proof": (
        lambda tmp: write(
            tmp,
            "rows.jsonl",
            lines(
                proofbench_row(1), proofbench_row(2, model_solution=f"a{NUL}b"), proofbench_row(3)
            ),
        ),
        ("rows.jsonl", 2, "model_solution", "holds a NUL character (U+0000) at character 2"),
        ["T-001", "T-003"],
    ),
    "proofbench jsonl, raw NUL byte": (
        lambda tmp: write(
            tmp,
            "rows.jsonl",
            lines(
                proofbench_row(1),
                json.dumps(proofbench_row(2, model_solution="a@@b")).replace("@@", NUL).encode(),
            ),
        ),
        ("rows.jsonl", 2, "model_solution", "NUL character"),
        ["T-001"],
    ),
    "proofbench jsonl, NUL in a nested JSON string": (
        lambda tmp: write(
            tmp,
            "rows.jsonl",
            lines(proofbench_row(1, metadata={"contest": f"Test{NUL}MO"}), proofbench_row(2)),
        ),
        ("rows.jsonl", 1, "metadata.contest", "NUL character"),
        ["T-002"],
    ),
    "proofbench jsonl, NUL in a field's name": (
        lambda tmp: write(
            tmp,
            "rows.jsonl",
            lines(proofbench_row(1), proofbench_row(2, metadata={f"a{NUL}b": 1})),
        ),
        ("rows.jsonl", 2, "metadata.a\\x00b", "the field's name holds a NUL"),
        ["T-001"],
    ),
    "proofbench jsonl, lone surrogate": (
        lambda tmp: write(
            tmp,
            "rows.jsonl",
            lines(proofbench_row(1), b'{"problem_id": "T-002", "problem": "x \\ud800 y"}'),
        ),
        ("rows.jsonl", 2, "problem", "lone surrogate (U+D800"),
        ["T-001"],
    ),
    "proofbench csv, NUL and a Latin-1 byte": (
        lambda tmp: write(
            tmp,
            "rows.csv",
            b"problem_id,problem,model_solution,generator\n"
            b"C-1,Show it.,Fine proof.,m\n"
            b"C-2,Show it.,Bad\x00proof.,m\n"
            b"C-3,Caf\xe9 problem.,Fine proof.,m\n"
            b"C-4,Show it.,Fine proof.,m\n",
        ),
        ("rows.csv", 3, "model_solution", "NUL character (U+0000) at character 4"),
        ["C-1", "C-4"],
    ),
    "proofbench parquet, NUL in a cell": (
        lambda tmp: (
            pq.write_table(
                pa.Table.from_pylist(
                    [
                        {"problem_id": "Q-1", "problem": "Show it.", "model_solution": "ok"},
                        {"problem_id": "Q-2", "problem": "Show it.", "model_solution": f"b{NUL}d"},
                    ]
                ),
                tmp / "rows.parquet",
            )
            or tmp / "rows.parquet"
        ),
        ("rows.parquet", 2, "model_solution", "NUL character"),
        ["Q-1"],
    ),
    "imobench csv, a Latin-1 byte": (
        lambda tmp: write(
            tmp,
            "proofbench_v9.csv",
            b"Problem ID,Problem,Solution,Grading guidelines,Category,Level,Short Answer,Source\n"
            b"PB-1,Show it.,Because.,(7) all,Algebra,Basic,,ours\n"
            b"PB-2,Caf\xe9 it.,Because.,(7) all,Algebra,Basic,,ours\n",
        ),
        ("proofbench_v9.csv", 3, "Problem", "byte 0xe9 at character 4, which is not UTF-8"),
        ["PB-1"],
    ),
    "deepseek outputs, NUL in the proof": (
        lambda tmp: write(
            tmp,
            "outputs.jsonl",
            lines(deepseek_output("IMO2030-1", f"cut{NUL}"), deepseek_output("IMO2030-2", "ok")),
        ),
        ("outputs.jsonl", 1, "model_prediction.proof", "NUL character"),
        ["IMO2030-2"],
    ),
    "deepseek inputs, NUL in a question": (
        lambda tmp: write(
            tmp,
            "inputs.json",
            json.dumps(
                [
                    {"id": 1, "question": "Q one", "problem_idx": "IMO2030-1"},
                    {"id": 2, "question": f"Q{NUL}two", "problem_idx": "IMO2030-2"},
                    {"id": 3, "question": "Q three", "problem_idx": "IMO2030-3"},
                ],
                indent=1,
            ).encode(),
        ),
        ("inputs.json", 7, "question", "NUL character"),
        ["IMO2030-1", "IMO2030-3"],
    ),
    "opc training rows, NUL in the judge prompt": (
        lambda tmp: write(
            tmp, "train.jsonl", lines(opc_train("1", "Fine."), opc_train("2", f"Bad{NUL}."))
        ),
        ("train.jsonl", 2, "prompt[0].content", "NUL character"),
        ["O-1"],
    ),
    "opc raw problems, NUL in a solution": (
        lambda tmp: write(
            tmp,
            "raw.json",
            json.dumps(
                [
                    {"problem_id": "R-1", "problem": "P1", "solutions": [{"solution": "S"}]},
                    {"problem_id": "R-2", "problem": "P2", "solutions": [{"solution": f"S{NUL}"}]},
                ]
            ).encode(),
        ),
        ("raw.json", 1, "solutions[0].solution", "NUL character"),
        ["R-1"],
    ),
    "opc solved file, NUL in one attempt": (
        lambda tmp: write(
            tmp,
            "solved.json",
            json.dumps(
                {
                    "problem_id": "S-1",
                    "problem": "Show it.",
                    "attempts": [
                        {"model_id": "m", "timestamp": "t0", "solution": "Fine."},
                        {"model_id": "m", "timestamp": "t1", "solution": f"Bad{NUL}."},
                        {"model_id": "m", "timestamp": "t2", "solution": "Also fine."},
                    ],
                }
            ).encode(),
        ),
        ("solved.json", 1, "attempts[1].solution", "NUL character"),
        ["S-1"],
    ),
    "our jsonl, NUL in an analysis": (
        lambda tmp: write(
            tmp,
            "corpus.jsonl",
            lines(
                generic_problem(),
                generic_proof(sample="1", analyses=[{"verifier": "v", "text": f"x{NUL}"}]),
                generic_proof(sample="2"),
            ),
        ),
        ("corpus.jsonl", 2, "analyses[0].text", "NUL character"),
        ["G-1"],
    ),
    "matharena folder, NUL in a statement": (
        lambda tmp: matharena_folder(tmp, f"Prove\nthat {NUL} is bad."),
        ("usamo_2031/problems/2.tex", 2, "", "NUL character (U+0000) at line 2, column 6"),
        ["USAMO-2031-P1"],
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_record_the_database_cannot_store_fails_alone_in_every_format(tmp_path, case):
    make, (file, line, field, words), imported = CASES[case]
    report = corpus_import(path=make(tmp_path))
    errors = [issue for issue in report.issues if issue["level"] == "error"]
    assert errors and (errors[0]["file"], errors[0]["line"], errors[0]["field"]) == (
        file,
        line,
        field,
    ), errors
    assert words in errors[0]["message"], errors[0]
    assert report.committed and report.lines()[-1].endswith(LEFT_OUT)
    assert sorted(Problem.objects.values_list("external_id", flat=True)) == imported


def test_a_row_fails_as_a_whole_and_its_neighbours_keep_theirs(tmp_path):
    """The bad proof's row takes its analyses with it; the other proof of the file keeps its own,
    and an analysis on a line of its own fails alone."""
    path = write(
        tmp_path,
        "corpus.jsonl",
        lines(
            generic_problem(),
            generic_proof(sample="1", text=f"P{NUL}", analyses=[{"verifier": "v", "text": "A"}]),
            generic_proof(sample="2", analyses=[{"verifier": "v", "text": "kept"}]),
            {"kind": "analysis", "problem": "G-1", "generator": "model-b", "proof_sample": "2",
             "verifier": "w", "text": f"bad{NUL}"},
        ),
    )  # fmt: skip
    report = corpus_import(path=path)
    assert [(i["line"], i["field"]) for i in report.issues] == [(2, "text"), (4, "text")]
    assert list(Proof.objects.values_list("sample_key", flat=True)) == ["2"]
    assert list(VerifierAnalysis.objects.values_list("text", flat=True)) == ["kept"]
    assert ReferenceSolution.objects.count() == 1


def test_a_csv_header_the_database_cannot_store_fails_the_file(tmp_path):
    path = write(tmp_path, "rows.csv", b"problem_id,probl\xe8me\nC-1,x\n")
    report = corpus_import(path=path, fmt="proofbench")
    assert [(i["line"], i["message"][:40]) for i in report.issues] == [
        (1, "The header's column names holds the byte")
    ]
    assert report.lines()[-1] == "1 error(s): nothing was written."


# -- the doors: the command, the upload page's job, the API ----------------------------------

NUL_FILE = lines(proofbench_row(1, model_solution=f"a{NUL}b"), proofbench_row(2))


def test_the_command_names_the_line_and_imports_the_rest(tmp_path):
    path = write(tmp_path, "rows.jsonl", NUL_FILE)
    out = StringIO()
    with pytest.raises(CommandError, match=LEFT_OUT):
        call_command("import_corpus", str(path), stdout=out)
    assert "error: rows.jsonl:1: field 'model_solution': holds a NUL character" in out.getvalue()
    assert "problems: 1 created" in out.getvalue()
    assert list(Problem.objects.values_list("external_id", flat=True)) == ["T-002"]


def test_the_upload_page_refuses_the_file_with_its_lines(client, admin_user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(admin_user)
    upload = SimpleUploadedFile("rows.jsonl", NUL_FILE)
    response = client.post(reverse("problems:import"), {"file": upload, "format": ""})
    assert response.status_code == 400 and not ImportJob.objects.exists()
    page = response.content.decode()
    assert "rows.jsonl: line 1 holds the escape \\u0000, character" in page
    assert "Import the rest if some lines cannot be stored" in page


def test_the_upload_pages_job_names_the_line_and_imports_the_rest(
    client, admin_user, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(admin_user)
    upload = SimpleUploadedFile("rows.jsonl", NUL_FILE)
    form = {"file": upload, "format": "", "skip_unstorable": "on"}
    assert client.post(reverse("problems:import"), form).status_code == 302
    job = import_job_run(job_id=ImportJob.objects.get().pk)
    assert job.status == ImportJob.Status.SUCCEEDED and job.error.endswith(LEFT_OUT)
    assert [(i["line"], i["field"]) for i in job.report] == [(1, "model_solution")]
    assert job.counts["problems"]["created"] == 1
    page = client.get(reverse("problems:import-detail", args=[job.pk])).content.decode()
    assert "holds a NUL character (U+0000) at character 2" in page and LEFT_OUT in page


def test_the_api_refuses_at_the_door_naming_every_line(api_client_for, admin_user, settings):
    """A raw NUL, a NUL's JSON escape, a lone surrogate's escape and a Latin-1 byte, each named
    by line; an escaped backslash before u0000 and a whole surrogate pair are text, not refused;
    nothing is written and no job is made."""
    api = api_client_for(admin_user)
    content = lines(
        proofbench_row(1, model_solution="fine \\u0000 and \ud83d\ude00"),
        proofbench_row(2, model_solution=f"a{NUL}b"),
        b'{"problem_id": "T-3", "problem": "x\x00y"}',
        b'{"problem_id": "T-4", "problem": "half \\ud800 here"}',
        b'{"problem_id": "T-5", "problem": "caf\xe9"}',
    )
    response = api.post(
        reverse("api-import-create"),
        {"file": SimpleUploadedFile("rows.jsonl", content)},
        format="multipart",
    )
    assert response.status_code == 400 and not ImportJob.objects.exists()
    message = response.json()["file"][0]
    assert message.startswith("rows.jsonl: line 2 holds the escape \\u0000, character ")
    assert "line 3 holds a NUL character (U+0000) at character 36" in message
    assert "line 4 holds the escape \\ud800" in message and "half of a surrogate pair" in message
    assert "line 5 holds the byte 0xe9" in message and "line 1" not in message
    assert "skip_unstorable" in message


def test_the_api_imports_the_rest_when_asked_and_its_job_reports_the_bad_field(
    api_client_for, admin_user, settings, tmp_path
):
    """The NUL on the first line, in a field's name, with skip_unstorable: the report stores the
    name escaped (PostgreSQL's JSON refuses a NUL)."""
    settings.MEDIA_ROOT = tmp_path
    api = api_client_for(admin_user)
    content = lines(
        proofbench_row(1, metadata={f"k{NUL}": 1}), proofbench_row(2), proofbench_row(3)
    )
    response = api.post(
        reverse("api-import-create"),
        {"file": SimpleUploadedFile("rows.jsonl", content), "skip_unstorable": True},
        format="multipart",
    )
    assert response.status_code == 202, response.data
    import_job_run(job_id=response.data["id"])
    detail = api.get(reverse("api-import-detail", args=[response.data["id"]])).json()
    assert detail["status"] == "succeeded" and detail["error"].endswith(LEFT_OUT)
    assert [(i["line"], i["field"]) for i in detail["report"]] == [(1, "metadata.k\\x00")]
    assert detail["counts"]["problems"]["created"] == 2
    assert sorted(Problem.objects.values_list("external_id", flat=True)) == ["T-002", "T-003"]


def test_a_file_of_nothing_but_bad_records_fails_its_job(admin_user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    job = ImportJob.objects.create(original_name="bad.jsonl", created_by=admin_user)
    job.file.save(
        "bad.jsonl", SimpleUploadedFile("bad.jsonl", lines(proofbench_row(1, problem=NUL)))
    )
    job = import_job_run(job_id=job.pk)
    assert job.status == ImportJob.Status.FAILED and job.error == "1 error(s): nothing was written."
    assert not Problem.objects.exists()
