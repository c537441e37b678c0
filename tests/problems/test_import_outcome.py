"""What an import says it did: the format each source was read as, the scheme versions other
apps made of it; a binary upload named as such; a job waiting with no worker says so."""

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from core import workers
from problems.models import ImportJob
from problems.services import import_job_run
from problems.tasks import import_run

pytestmark = pytest.mark.django_db
NO_WORKER_DB = 13  # no test worker serves it (`make test` uses 15)


def job_for(admin_user, path_or_bytes, name: str) -> ImportJob:
    data = path_or_bytes if isinstance(path_or_bytes, bytes) else path_or_bytes.read_bytes()
    job = ImportJob.objects.create(original_name=name, created_by=admin_user, total=len(data))
    job.file.save(name, SimpleUploadedFile(name, data))
    return job


@pytest.mark.django_db(transaction=True)  # the import commits, then schemes are made
def test_an_imobench_import_names_its_format_and_the_scheme_versions_it_made(
    client, admin_user, settings, tmp_path, real_fixtures
):
    settings.MEDIA_ROOT = tmp_path
    job = job_for(admin_user, real_fixtures / "imobench" / "proofbench_v2.csv", "pb.csv")
    import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.SUCCEEDED, job.error
    assert job.formats == [{"source": "pb.csv", "format": "imobench"}]
    (made,) = job.made
    assert made.startswith("60 marking scheme versions made: PB-Basic-001 v1, ")
    assert made.endswith("and 40 more.")
    client.force_login(admin_user)
    html = client.get(reverse("problems:import-detail", args=[job.pk])).content.decode()
    assert "pb.csv: read as <strong>IMO-ProofBench CSV</strong>" in html and "(detected)" in html
    assert "60 marking scheme versions made" in html


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00",
        b"PK\x03\x04\x14\x00\x06\x00spreadsheet.xml",
        b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj",
    ],
)
def test_a_binary_file_is_not_a_text_file(admin_user, settings, tmp_path, data):
    settings.MEDIA_ROOT = tmp_path
    job = job_for(admin_user, data, "problems.csv")
    import_job_run(job_id=job.pk)
    job.refresh_from_db()
    (issue,) = job.report
    assert issue["message"].startswith("This is not a text file"), issue
    assert "UTF" not in issue["message"] and "encoding" not in issue["message"]


def test_utf16_without_a_byte_order_mark_is_still_called_utf16(admin_user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    job = job_for(admin_user, '{"problem_id": "X"}\n'.encode("utf-16-le"), "rows.jsonl")
    import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert "UTF-16 or UTF-32" in job.report[0]["message"]


@pytest.mark.worker  # asks a Redis broker whether a worker answers
def test_a_waiting_import_says_when_no_worker_is_alive(client, admin_user, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        pytest.fail("this test needs a redis:// CELERY_BROKER_URL (`make test` sets one)")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    # the same Redis, a database no worker serves (the test worker may be running on ours)
    settings.CELERY_BROKER_URL = settings.CELERY_BROKER_URL.rsplit("/", 1)[0] + f"/{NO_WORKER_DB}"
    cache.delete(workers.CACHE_KEY)
    job = job_for(admin_user, b'{"problem_id": "X"}\n', "rows.jsonl")
    client.force_login(admin_user)
    url = reverse("problems:import-detail", args=[job.pk])
    assert 'id="no-worker"' in client.get(url).content.decode()
    settings.CELERY_TASK_ALWAYS_EAGER = True  # jobs run in the web process: nothing to say
    assert 'id="no-worker"' not in client.get(url).content.decode()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_live_worker_answers_the_ping(celery_worker_process):
    cache.delete(workers.CACHE_KEY)
    assert workers.workers_alive() is True


@pytest.mark.django_db(transaction=True)  # the import commits, then its receivers run
def test_a_receiver_that_raises_leaves_a_committed_import_succeeded(admin_user, settings, tmp_path):
    from problems.models import Problem
    from problems.signals import corpus_imported

    def broken(sender, problem_ids, **kwargs):
        raise RuntimeError("the follow-up broke")

    settings.MEDIA_ROOT = tmp_path
    row = b'{"kind": "problem", "id": "P-1", "statement": "Show that $1 + 1 = 2$."}\n'
    job = job_for(admin_user, row, "rows.jsonl")
    corpus_imported.connect(broken, dispatch_uid="test.broken")
    try:
        import_run.apply(args=[job.pk])  # as the worker runs it: through the job runner
    finally:
        corpus_imported.disconnect(dispatch_uid="test.broken")
    job.refresh_from_db()
    assert (job.status, job.error, job.attempts) == (ImportJob.Status.SUCCEEDED, "", 1)
    assert Problem.objects.filter(external_id="P-1").exists()
    (note,) = [issue for issue in job.report if "the follow-up broke" in issue["message"]]
    assert note["level"] == "warning" and "the import itself is committed" in note["message"]


def test_a_running_import_shows_its_progress_on_the_embedded_default_too(
    client, admin_user, settings, tmp_path
):
    """An import inside a caller's transaction (as a test runs, or a command run in one) cannot
    write progress on a connection of its own: it goes through the run folder."""
    from problems.services.jobs import _ProgressWriter
    from problems.services.report import ImportReport

    settings.MEDIA_ROOT, settings.RUN_DIR = tmp_path / "media", tmp_path / "run"
    job = job_for(
        admin_user, b'{"kind": "problem", "id": "P-1", "statement": "S"}\n' * 40, "r.jsonl"
    )
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING)
    report = ImportReport()
    report.counts["problems"]["created"] = 12
    writer = _ProgressWriter(job.pk, job.total)
    writer(job.total // 2, report)
    client.force_login(admin_user)
    url = reverse("problems:import-detail", args=[job.pk])
    shown = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert 'aria-valuenow="50"' in shown
    writer.close()
    assert not (settings.RUN_DIR / "progress").exists() or not any(
        (settings.RUN_DIR / "progress").iterdir()
    )
