"""Browser flow of the import page: an admin uploads a file with the licence of its source, the
job runs on the real Celery worker, the page polls (htmx) until the progress bar is full and
shows the per-line report."""

import json
import zipfile

import pytest

from problems.models import ImportJob, Proof
from tests.factories import UserFactory
from tests.problems.import_files import proofbench_row

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_admin_uploads_a_file_and_watches_it_finish(
    page, live_server, login, celery_worker_process, screenshot_dir, tmp_path, assert_accessible
):
    rows = [proofbench_row(index) for index in range(40)]
    rows[3]["reviewer_note"] = "kept aside"
    path = tmp_path / "proofbench_rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    login(page, UserFactory(username="admin-e2e", roles=["admin"]))
    with page.expect_navigation():  # until load: htmx is listening
        page.click("nav.mainnav >> text=Import")
    page.wait_for_selector("form.import-form")
    page.set_input_files("#id_file", str(path))
    page.select_option("#id_format", "proofbench")
    page.fill("#id_licence", "CC-BY-SA-4.0")
    page.screenshot(path=str(screenshot_dir / "import-upload.png"), full_page=True)
    assert_accessible(page)
    page.click("form.import-form button[type=submit]")

    page.wait_for_url("**/problems/import/*/")
    page.wait_for_selector("#import-status[data-status=succeeded]", timeout=60_000)
    assert page.locator("#import-state").inner_text() == "Done"
    assert page.locator("#import-licence").inner_text() == "licence CC-BY-SA-4.0"
    assert page.locator(".progress").get_attribute("aria-valuenow") == "100"
    counts = page.locator("table.counts").inner_text()
    assert "40" in counts
    assert "read as ProofBench rows" in page.inner_text("#import-formats")
    assert page.locator("#no-worker").count() == 0  # the worker is alive
    report = page.locator("table.report").inner_text()
    assert "reviewer_note" in report and "proofbench_rows.jsonl" in report
    page.screenshot(path=str(screenshot_dir / "import-done.png"), full_page=True)
    assert_accessible(page)

    page.reload()
    page.wait_for_selector("#import-status[data-status=succeeded]")
    assert Proof.objects.count() == 40
    assert {proof.metadata["licence"] for proof in Proof.objects.all()} == {"CC-BY-SA-4.0"}
    job = ImportJob.objects.get()
    assert (job.original_name, job.licence) == ("proofbench_rows.jsonl", "CC-BY-SA-4.0")
    job.file.delete(save=False)


def test_a_bad_file_shows_every_error_and_imports_its_good_rows(
    page, live_server, login, celery_worker_process, screenshot_dir, tmp_path, assert_accessible
):
    """Bad records fail alone: a row without an id, a rating out of range and a proof holding a
    NUL (which PostgreSQL cannot store) are each named by line and field; the good rows are
    imported. The NUL is named at the door first: the file is imported only once the admin
    chooses to import the rest."""
    path = tmp_path / "broken.jsonl"
    path.write_text(
        json.dumps(proofbench_row(1))
        + "\n"
        + json.dumps({"problem": "no id"})
        + "\n"
        + json.dumps(proofbench_row(3, expert_rating=12))
        + "\n"
        + json.dumps(proofbench_row(4, model_solution="Proof cut by a \x00 byte."))
        + "\n"
        + json.dumps(proofbench_row(5))
        + "\n",
        encoding="utf-8",
    )
    login(page, UserFactory(username="admin-e2e2", roles=["admin"]))
    page.goto(f"{live_server.url}/problems/import/")
    page.set_input_files("#id_file", str(path))
    page.click("form.import-form button[type=submit]")
    refusal = page.locator("form.import-form .errorlist").inner_text()
    assert "broken.jsonl: line 4 holds the escape \\u0000" in refusal
    page.set_input_files("#id_file", str(path))
    page.check("#id_skip_unstorable")
    page.click("form.import-form button[type=submit]")
    page.wait_for_selector("#import-status[data-status=succeeded]", timeout=60_000)
    assert page.locator("#import-state").inner_text() == "Done, with errors"
    rows = page.locator("table.report tbody tr").all_inner_texts()
    assert len(rows) == 3
    assert "problem_id" in rows[0] and "missing (required)" in rows[0]
    assert "expert_rating" in rows[1] and "outside 0-7" in rows[1]
    assert "model_solution" in rows[2] and "NUL character" in rows[2]
    status = page.locator("#import-status").inner_text()
    assert "3 error(s): the records they name were not imported; every other record was." in status
    assert "2" in page.locator("table.counts").inner_text()
    page.screenshot(path=str(screenshot_dir / "import-with-errors.png"), full_page=True)
    assert_accessible(page)
    for width, height in ((1024, 768), (390, 844)):  # tablet, phone: the report stays readable
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(
            path=str(screenshot_dir / f"import-with-errors-{width}.png"), full_page=True
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert sorted(Proof.objects.values_list("problem__external_id", flat=True)) == [
        "T-001",
        "T-005",
    ]
    ImportJob.objects.get().file.delete(save=False)


def test_a_file_of_bad_rows_only_fails_and_writes_nothing(
    page, live_server, login, celery_worker_process, screenshot_dir, tmp_path, assert_accessible
):
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps({"problem_id": "T-9"}) + "\n", encoding="utf-8")
    login(page, UserFactory(username="admin-e2e4", roles=["admin"]))
    page.goto(f"{live_server.url}/problems/import/")
    page.set_input_files("#id_file", str(path))
    page.click("form.import-form button[type=submit]")
    page.wait_for_selector("#import-status[data-status=failed]", timeout=60_000)
    assert "nothing was written" in page.locator("#import-status").inner_text()
    assert page.locator("table.counts").count() == 0
    page.screenshot(path=str(screenshot_dir / "import-failed.png"), full_page=True)
    assert_accessible(page)
    assert Proof.objects.count() == 0
    ImportJob.objects.get().file.delete(save=False)


def test_an_obviously_wrong_file_is_refused_on_the_page_at_once(
    page, live_server, login, screenshot_dir, tmp_path, assert_accessible
):
    """A zip bomb and a UTF-16 file: the form comes back naming the problem by the file field
    (no job, nothing stored), double click and Enter included; a right file then goes through."""
    bomb = tmp_path / "corpus.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("rows.jsonl", b" " * (8 * 1024 * 1024))
    wide = tmp_path / "rows.csv"
    wide.write_bytes("problem_id,proof\nP1,x\n".encode("utf-16"))
    login(page, UserFactory(username="admin-e2e3", roles=["admin"]))
    page.goto(f"{live_server.url}/problems/import/")
    page.set_input_files("#id_file", str(bomb))
    page.dblclick("form.import-form button[type=submit]")
    page.wait_for_selector("form.import-form .errorlist")
    assert "more than 100 times its size" in page.locator("form.import-form").inner_text()
    page.screenshot(path=str(screenshot_dir / "import-refused.png"), full_page=True)
    assert_accessible(page)

    page.set_input_files("#id_file", str(wide))
    page.locator("#id_licence").press("Enter")
    page.wait_for_selector("form.import-form .errorlist >> text=UTF-16")
    page.go_back()
    assert not ImportJob.objects.exists()

    good = tmp_path / "rows.jsonl"
    good.write_text(json.dumps(proofbench_row(1)) + "\n", encoding="utf-8")
    page.goto(f"{live_server.url}/problems/import/")
    page.set_input_files("#id_file", str(good))
    page.click("form.import-form button[type=submit]")
    page.wait_for_url("**/problems/import/*/")
    ImportJob.objects.get().file.delete(save=False)
