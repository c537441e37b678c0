"""The three doors to the one import service: the command, the admin upload page and the API,
plus the Celery task (once with the real worker process)."""

import json
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from problems.models import ImportJob, Problem, Proof
from problems.services import import_job_run
from problems.services.jobs import import_uploads_prune
from problems.tasks import import_run
from tests.conftest import wait_for
from tests.problems.import_files import proofbench_row


def rows_file(name: str = "rows.jsonl", rows: list[dict] | None = None) -> SimpleUploadedFile:
    rows = rows if rows is not None else [proofbench_row(1), proofbench_row(2)]
    content = "".join(json.dumps(row) + "\n" for row in rows).encode()
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


# -- command ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_command_imports_and_prints_the_report(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(rows_file().read())
    out = StringIO()
    call_command("import_corpus", str(path), stdout=out)
    assert "problems: 2 created, 0 updated, 0 unchanged" in out.getvalue()
    assert Proof.objects.count() == 2
    out = StringIO()
    call_command("import_corpus", str(path), "--format", "proofbench", stdout=out)
    assert "proofs: 0 created, 0 updated, 2 unchanged" in out.getvalue()


@pytest.mark.django_db
def test_command_dry_run_and_errors_exit_non_zero(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(rows_file().read())
    out = StringIO()
    call_command("import_corpus", str(path), "--dry-run", stdout=out)
    assert "Dry run: nothing was written." in out.getvalue()
    assert Problem.objects.count() == 0
    path.write_text('{"problem": "no id"}\n')
    out = StringIO()
    with pytest.raises(CommandError, match="1 error"):
        call_command("import_corpus", str(path), "--format", "proofbench", stdout=out)
    assert "rows.jsonl:1: field 'problem_id': missing (required)." in out.getvalue()


# -- the job service and the task (eagerly, in this process) ----------------------------------


@pytest.mark.django_db
def test_job_records_counts_and_report_and_runs_once(admin_user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    job = ImportJob.objects.create(
        original_name="rows.jsonl", created_by=admin_user, total=10, dry_run=False
    )
    job.file.save("rows.jsonl", rows_file(rows=[proofbench_row(1, judge="x")]))
    import_run.apply(args=[job.pk])
    job.refresh_from_db()
    assert job.status == ImportJob.Status.SUCCEEDED, (job.error, job.report)
    assert job.counts["proofs"] == {"created": 1, "updated": 0, "unchanged": 0}
    assert job.report[0]["level"] == "warning" and "judge" in job.report[0]["message"]
    assert job.processed == 10 and job.finished_at is not None
    assert not job.file and not any(tmp_path.rglob("*.jsonl"))  # the upload went with the job
    finished = job.finished_at
    import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.finished_at == finished


@pytest.mark.django_db
def test_job_with_errors_is_failed_with_its_report(admin_user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    job = ImportJob.objects.create(original_name="bad.jsonl", created_by=admin_user)
    job.file.save("bad.jsonl", rows_file("bad.jsonl", rows=[{"problem_id": "X"}]))
    import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED
    assert not job.file and not any(tmp_path.rglob("*.jsonl"))
    assert job.error == "1 error(s): nothing was written."
    assert job.report == [
        {
            "level": "error",
            "file": "bad.jsonl",
            "line": 1,
            "field": "problem",
            "message": "missing (required).",
        }
    ]


@pytest.mark.django_db
def test_an_upload_kept_past_its_age_is_removed_and_its_job_fails_clearly(
    admin_user, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    job = ImportJob.objects.create(original_name="rows.jsonl", created_by=admin_user)
    job.file.save("rows.jsonl", rows_file(rows=[proofbench_row(1)]))
    fresh = ImportJob.objects.create(original_name="new.jsonl", created_by=admin_user)
    fresh.file.save("new.jsonl", rows_file("new.jsonl", rows=[proofbench_row(2)]))
    old = timezone.now() - timedelta(days=settings.PROOFMARK_IMPORT_UPLOAD_DAYS, hours=1)
    ImportJob.objects.filter(pk=job.pk).update(created_at=old)
    assert import_uploads_prune() == 1
    assert [p.name for p in tmp_path.rglob("*.jsonl")] == [Path(fresh.file.name).name]
    import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and "removed after" in job.error


# -- the page --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_upload_page_is_for_admins_only(client, expert_user, researcher_user):
    for user in (expert_user, researcher_user):
        client.force_login(user)
        assert client.get(reverse("problems:import")).status_code == 403
        assert client.post(reverse("problems:import"), {"file": rows_file()}).status_code == 403
    assert ImportJob.objects.count() == 0


@pytest.mark.django_db
def test_upload_creates_a_job_enqueued_on_commit(
    client, admin_user, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(admin_user)
    assert client.get(reverse("problems:import")).status_code == 200
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(
            reverse("problems:import"), {"file": rows_file(), "format": "", "dry_run": "on"}
        )
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("problems:import-detail", args=[job.pk])
    assert (job.original_name, job.dry_run, job.status, job.created_by) == (
        "rows.jsonl",
        True,
        "pending",
        admin_user,
    )
    assert len(callbacks) == 1
    import_job_run(job_id=job.pk)
    page = client.get(reverse("problems:import-detail", args=[job.pk]))
    assert "Dry run: nothing was written." in page.content.decode()
    fragment = client.get(reverse("problems:import-detail", args=[job.pk]), HTTP_HX_REQUEST="true")
    assert fragment.content.decode().lstrip().startswith('<section id="import-status"')
    assert "hx-trigger" not in fragment.content.decode()


@pytest.mark.django_db
def test_upload_form_names_what_is_wrong(client, admin_user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.PROOFMARK_MAX_UPLOAD_BYTES = 100
    client.force_login(admin_user)
    response = client.post(reverse("problems:import"), {"file": rows_file()})
    assert response.status_code == 400
    assert "the upload limit is 0.0 MB" in response.content.decode()
    settings.PROOFMARK_MAX_UPLOAD_BYTES = 10**6
    response = client.post(
        reverse("problems:import"), {"file": SimpleUploadedFile("notes.docx", b"x")}
    )
    assert "upload a .jsonl, .json, .csv, .parquet, .arrow, .zip file" in response.content.decode()
    assert ImportJob.objects.count() == 0


def licences_by_problem() -> dict[str, tuple[str, str]]:
    """external id -> (the problem's licence, its proof's licence)."""
    return {
        proof.problem.external_id: (proof.problem.metadata["licence"], proof.metadata["licence"])
        for proof in Proof.objects.select_related("problem")
    }


@pytest.mark.django_db
def test_upload_form_takes_a_licence_that_the_job_records_on_the_imported_records(
    client, admin_user, settings, tmp_path, django_assert_max_num_queries
):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(admin_user)
    assert 'name="licence"' in client.get(reverse("problems:import")).content.decode()
    rows = [proofbench_row(1), proofbench_row(2, licence="CC0-1.0")]
    response = client.post(
        reverse("problems:import"),
        {"file": rows_file(rows=rows), "format": "proofbench", "licence": " CC-BY-SA-4.0 "},
    )
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert job.licence == "CC-BY-SA-4.0"
    import_job_run(job_id=job.pk)
    # The record's own licence wins over the one given for the upload.
    assert licences_by_problem() == {
        "T-001": ("CC-BY-SA-4.0", "CC-BY-SA-4.0"),
        "T-002": ("CC0-1.0", "CC0-1.0"),
    }
    with django_assert_max_num_queries(6):
        page = client.get(reverse("problems:import-detail", args=[job.pk])).content.decode()
    assert '<span id="import-licence">licence CC-BY-SA-4.0</span>' in page


@pytest.mark.django_db
def test_upload_form_with_a_blank_licence_leaves_the_formats_default(
    client, admin_user, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(admin_user)
    client.post(reverse("problems:import"), {"file": rows_file(), "licence": ""})
    job = ImportJob.objects.get()
    assert job.licence == ""
    import_job_run(job_id=job.pk)
    assert set(licences_by_problem().values()) == {("MIT", "MIT")}
    page = client.get(reverse("problems:import-detail", args=[job.pk])).content.decode()
    assert '<span id="import-licence">the format\'s default licence</span>' in page


@pytest.mark.django_db
def test_upload_form_refuses_an_overlong_licence(client, admin_user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(admin_user)
    response = client.post(reverse("problems:import"), {"file": rows_file(), "licence": "x" * 101})
    assert response.status_code == 400
    assert "at most 100 characters" in response.content.decode()
    assert ImportJob.objects.count() == 0


@pytest.mark.django_db
def test_running_job_page_polls_and_shows_progress(
    client, admin_user, django_assert_max_num_queries
):
    job = ImportJob.objects.create(
        original_name="big.jsonl",
        status="running",
        processed=250,
        total=1000,
        created_by=admin_user,
    )
    client.force_login(admin_user)
    with django_assert_max_num_queries(6):
        page = client.get(reverse("problems:import-detail", args=[job.pk])).content.decode()
    assert 'hx-trigger="every 1s"' in page
    assert 'aria-valuenow="25"' in page


# -- the API ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_api_upload_answers_202_and_the_job_finishes(
    api_client_for, admin_user, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    api = api_client_for(admin_user)
    with django_capture_on_commit_callbacks() as callbacks:
        response = api.post(
            reverse("api-import-create"),
            {"file": rows_file(), "format": "proofbench"},
            format="multipart",
        )
    assert response.status_code == 202
    job_id = response.data["id"]
    assert response.data["status"] == "pending"
    assert response.data["status_url"].endswith(reverse("api-import-detail", args=[job_id]))
    assert len(callbacks) == 1
    import_job_run(job_id=job_id)
    detail = api.get(reverse("api-import-detail", args=[job_id]))
    assert detail.status_code == 200
    assert detail.data["status"] == "succeeded"
    assert detail.data["counts"]["proofs"]["created"] == 2
    assert Proof.objects.count() == 2


@pytest.mark.django_db
def test_api_upload_takes_a_licence_and_the_job_shows_it(
    api_client_for, admin_user, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    api = api_client_for(admin_user)
    rows = [proofbench_row(1), proofbench_row(2, licence="CC0-1.0")]
    response = api.post(
        reverse("api-import-create"),
        {"file": rows_file(rows=rows), "licence": "CC-BY-NC-4.0"},
        format="multipart",
    )
    assert response.status_code == 202
    assert ImportJob.objects.get(pk=response.data["id"]).licence == "CC-BY-NC-4.0"
    import_job_run(job_id=response.data["id"])
    detail = api.get(reverse("api-import-detail", args=[response.data["id"]]))
    assert (detail.data["status"], detail.data["licence"]) == ("succeeded", "CC-BY-NC-4.0")
    assert licences_by_problem() == {
        "T-001": ("CC-BY-NC-4.0", "CC-BY-NC-4.0"),
        "T-002": ("CC0-1.0", "CC0-1.0"),
    }


@pytest.mark.django_db
def test_api_upload_without_a_licence_leaves_the_formats_default(
    api_client_for, admin_user, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    api = api_client_for(admin_user)
    too_long = api.post(
        reverse("api-import-create"),
        {"file": rows_file(), "licence": "x" * 101},
        format="multipart",
    )
    assert too_long.status_code == 400 and "licence" in too_long.data
    response = api.post(reverse("api-import-create"), {"file": rows_file()}, format="multipart")
    assert response.status_code == 202
    import_job_run(job_id=response.data["id"])
    detail = api.get(reverse("api-import-detail", args=[response.data["id"]]))
    assert (detail.data["status"], detail.data["licence"]) == ("succeeded", "")
    assert set(licences_by_problem().values()) == {("MIT", "MIT")}


@pytest.mark.django_db
def test_api_is_for_admins_and_checks_the_upload(api_client_for, expert_user, admin_user, settings):
    settings.PROOFMARK_MAX_UPLOAD_BYTES = 10
    response = api_client_for(expert_user).post(
        reverse("api-import-create"), {"file": rows_file()}, format="multipart"
    )
    assert response.status_code == 403
    response = api_client_for(admin_user).post(
        reverse("api-import-create"), {"file": rows_file(), "format": "pdf"}, format="multipart"
    )
    assert response.status_code == 400
    assert "upload limit" in str(response.data["file"][0])
    assert "format" in response.data
    assert ImportJob.objects.count() == 0


# -- the real worker ---------------------------------------------------------------------------


@pytest.mark.worker
def test_upload_runs_on_the_real_celery_worker(
    celery_worker_process, transactional_db, api_client_for
):
    from tests.factories import UserFactory

    admin = UserFactory(username="admin-worker", roles=["admin"])
    api = api_client_for(admin)
    response = api.post(
        reverse("api-import-create"),
        {"file": rows_file(rows=[proofbench_row(index) for index in range(30)])},
        format="multipart",
    )
    assert response.status_code == 202
    job = wait_for(
        lambda: ImportJob.objects.filter(
            pk=response.data["id"], status__in=["succeeded", "failed"]
        ).first()
    )
    assert job.status == "succeeded", (job.error, job.report)
    assert job.counts["problems"]["created"] == 30
    assert Proof.objects.count() == 30
    job.file.delete(save=False)


def test_progress_is_visible_while_the_import_transaction_is_open(
    transactional_db, admin_user, settings, tmp_path, monkeypatch
):
    """The job row gets its progress on a connection of its own, committed at once, so the page
    sees it before the import's own transaction ends."""
    from problems.services import jobs

    settings.MEDIA_ROOT = tmp_path
    monkeypatch.setattr(jobs, "PROGRESS_EVERY_SECONDS", 0)
    seen = []
    real_import = jobs.corpus_import

    def observed_import(**kwargs):
        writer = kwargs["on_progress"]

        def on_progress(bytes_read, report):
            writer(bytes_read, report)
            seen.append(ImportJob.objects.values_list("processed", flat=True).get(pk=job.pk))

        return real_import(**{**kwargs, "on_progress": on_progress, "batch_size": 5})

    monkeypatch.setattr(jobs, "corpus_import", observed_import)
    upload = rows_file(rows=[proofbench_row(index) for index in range(20)])
    job = ImportJob.objects.create(
        original_name="rows.jsonl", created_by=admin_user, total=upload.size
    )
    job.file.save("rows.jsonl", upload)
    import_job_run(job_id=job.pk)
    assert any(processed > 0 for processed in seen[:-1])
    job.refresh_from_db()
    assert (job.status, job.processed) == ("succeeded", upload.size)


@pytest.mark.django_db
def test_an_upload_far_over_the_limit_is_refused_before_it_is_read(client, admin_user, settings):
    settings.PROOFMARK_MAX_UPLOAD_BYTES = 1000
    client.force_login(admin_user)
    big = SimpleUploadedFile("big.jsonl", b"x" * (2 * 1024 * 1024))
    response = client.post(reverse("problems:import"), {"file": big})
    assert response.status_code == 413
    assert "the limit is 0.0 MB" in response.content.decode()
    assert "manage.py import_corpus" in response.content.decode()
    assert ImportJob.objects.count() == 0
