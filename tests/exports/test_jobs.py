"""Export jobs: the real Celery worker builds the file; failures and interruptions leave no file
that looks complete; the command writes the same dataset; pages, downloads and API by role."""

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.urls import reverse

from exports.models import ExportJob
from exports.services import export_create, export_file_open, export_run
from tests.conftest import as_job, wait_for
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory


@pytest.fixture
def media(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.worker
def test_the_worker_builds_the_export_and_the_api_downloads_it(
    transactional_db, celery_worker_process, api_client_for
):
    corpus = labelled_campaign()
    researcher = UserFactory(username="res-worker", roles=["researcher"])
    client = api_client_for(researcher)
    response = client.post(
        "/api/v1/exports/",
        {
            "campaign": corpus.campaign.slug,
            "format": "dv",
            "file_type": "parquet",
            "filters": {"contest": "Test Olympiad"},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    job_id = response.json()["id"]
    assert response.json()["download_url"] is None

    done = wait_for(
        lambda: client.get(f"/api/v1/exports/{job_id}/").json()["status"] in ("succeeded", "failed")
    )
    assert done
    status = client.get(f"/api/v1/exports/{job_id}/").json()
    assert status["status"] == "succeeded", status["error"]
    assert status["processed"] == 2 and status["manifest"]["counts"]["rows"] == 2
    download = client.get(f"/api/v1/exports/{job_id}/download/")
    assert download.status_code == 200
    body = b"".join(download.streaming_content)
    assert body[:4] == b"PAR1" and len(body) == status["size"]
    manifest = client.get(f"/api/v1/exports/{job_id}/download/", {"part": "manifest"})
    assert json.loads(b"".join(manifest.streaming_content))["filters"]["contest"] == (
        "Test Olympiad"
    )
    job = ExportJob.objects.get(pk=job_id)
    assert (Path(settings.MEDIA_ROOT) / job.file).is_file()


def test_a_failed_job_records_the_error_and_leaves_no_file(db, media, monkeypatch):
    corpus = labelled_campaign()
    user = UserFactory(username="res-fail", roles=["researcher"])
    job = ExportJob.objects.create(
        campaign=corpus.campaign, format="proofbench", file_type="jsonl", created_by=user
    )
    from exports.formats import base

    real = base.first_references

    def broken(problem_ids):
        real(problem_ids)
        raise ConnectionError("database connection lost mid-export")

    monkeypatch.setattr(base, "first_references", broken)
    job = export_run(job_id=job.pk)
    assert job.status == "failed"
    assert "database connection lost" in job.error
    assert job.file == "" and job.size is None
    assert files_under(media) == []


def test_an_interrupted_job_left_nothing_complete_and_a_rerun_completes(db, media):
    corpus = labelled_campaign()
    user = UserFactory(username="res-int", roles=["researcher"])
    job = ExportJob.objects.create(
        campaign=corpus.campaign,
        format="dv",
        file_type="csv",
        created_by=user,
        status="running",
        attempts=1,
    )
    # What a worker killed while storing its files leaves: part of one, in its attempt's folder.
    killed = Path(media) / "exports" / str(job.pk) / "1"
    killed.mkdir(parents=True)
    (killed / "golden-pilot-dv.csv").write_text("problem_id,prob")
    ExportJob.objects.filter(pk=job.pk).update(heartbeat_at=None, started_at=None)
    job = as_job("export", job.pk, lambda: export_run(job_id=job.pk))
    assert job.status == "succeeded" and job.file.startswith(f"exports/{job.pk}/2/")
    assert sorted(p.name for p in (Path(media) / job.file).parent.iterdir()) == [
        "golden-pilot-dv.csv",
        "golden-pilot-dv.csv.README.md",
        "golden-pilot-dv.csv.checkpoints.csv",  # its grades used a scheme's checklist
        "golden-pilot-dv.csv.manifest.json",
    ]
    again = export_run(job_id=job.pk)  # idempotent: a finished job is left alone
    assert again.finished_at == job.finished_at
    # a job finished before companions took the data file's whole name still serves them
    folder = (Path(media) / job.file).parent
    for new, old in (("csv.manifest.json", "manifest.json"), ("csv.README.md", "README.md")):
        (folder / f"golden-pilot-dv.{new}").rename(folder / f"golden-pilot-dv.{old}")
    for part, name in (
        ("manifest", "golden-pilot-dv.manifest.json"),
        ("card", "golden-pilot-dv.README.md"),
        ("data", "golden-pilot-dv.csv"),
        ("checkpoints", "golden-pilot-dv.csv.checkpoints.csv"),
    ):
        handle, served = export_file_open(job, part)
        handle.close()
        assert served == name
    assert job.manifest["checkpoints"]["file"] == "golden-pilot-dv.csv.checkpoints.csv"


def test_only_admins_may_export_names(db):
    corpus = labelled_campaign()
    researcher = UserFactory(username="res-names", roles=["researcher"])
    from exports.formats import ExportError

    with pytest.raises(ExportError, match="only an admin"):
        export_create(
            user=researcher,
            campaign=corpus.campaign,
            fmt="annotations",
            file_type="jsonl",
            filters={"expert_names": True},
        )


def test_annotations_pseudonymise_unless_names_are_chosen(db, media):
    corpus = labelled_campaign()
    admin = UserFactory(username="admin-names", roles=["admin"])
    named = export_create(
        user=admin,
        campaign=corpus.campaign,
        fmt="annotations",
        file_type="jsonl",
        filters={"expert_names": True},
    )
    plain = export_create(
        user=admin, campaign=corpus.campaign, fmt="annotations", file_type="jsonl", filters={}
    )
    experts = {}
    for job in (named, plain):
        job = export_run(job_id=job.pk)
        lines = (Path(media) / job.file).read_text().splitlines()
        experts[job.pk] = {json.loads(line)["expert"] for line in lines}
    assert experts[named.pk] == {"golden-pilot-ann", "golden-pilot-bob"}
    assert all(e.startswith("expert-") for e in experts[plain.pk])
    assert not experts[plain.pk] & {"golden-pilot-ann", "golden-pilot-bob"}


def test_command_writes_data_manifest_and_card(db, tmp_path):
    corpus = labelled_campaign()
    out = tmp_path / "pb.jsonl"
    call_command(
        "export_dataset",
        "--campaign",
        corpus.campaign.slug,
        "--format",
        "proofbench",
        "--file-type",
        "jsonl",
        "--out",
        str(out),
        "--label-source",
        "agreement",
    )
    assert len(out.read_text().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "pb.jsonl",
        "pb.jsonl.README.md",
        "pb.jsonl.checkpoints.csv",
        "pb.jsonl.manifest.json",
    ]
    with pytest.raises(CommandError, match="no campaign with slug 'nope'"):
        call_command(
            "export_dataset",
            "--campaign",
            "nope",
            "--format",
            "dv",
            "--file-type",
            "csv",
            "--out",
            str(tmp_path / "x.csv"),
        )
    with pytest.raises(CommandError, match="analysis-review campaign"):
        call_command(
            "export_dataset",
            "--campaign",
            corpus.campaign.slug,
            "--format",
            "dmv",
            "--file-type",
            "csv",
            "--out",
            str(tmp_path / "x.csv"),
        )


# --- Pages and permissions -------------------------------------------------------------------


@pytest.mark.parametrize("role", ["expert", "adjudicator"])
def test_experts_and_adjudicators_cannot_reach_exports(db, client, api_client_for, role):
    user = UserFactory(username=f"no-{role}", roles=[role])
    client.force_login(user)
    assert client.get(reverse("exports:list")).status_code == 403
    assert client.get(reverse("exports:evaluations")).status_code == 403
    assert api_client_for(user).post("/api/v1/exports/", {}, format="json").status_code == 403
    assert b">Exports</a>" not in client.get("/").content


def test_researcher_creates_an_export_from_the_page(
    db, client, media, django_capture_on_commit_callbacks
):
    corpus = labelled_campaign()
    researcher = UserFactory(username="res-page", roles=["researcher"])
    client.force_login(researcher)
    home = client.get("/").content.decode()
    assert 'href="/exports/"' in home
    page = client.get(reverse("exports:list"))
    assert page.status_code == 200 and "expert_names" not in page.content.decode()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            reverse("exports:list"),
            {
                "campaign": corpus.campaign.slug,
                "format": "proofbench",
                "file_type": "csv",
                "cut_low": 5,
                "cut_high": 7,
            },
        )
    job = ExportJob.objects.get()
    assert response.status_code == 302 and response.url == reverse("exports:detail", args=[job.pk])
    assert len(callbacks) == 1  # the task is queued on commit
    pending = client.get(reverse("exports:detail", args=[job.pk]), headers={"HX-Request": "true"})
    assert 'hx-trigger="every 1s"' in pending.content.decode()
    export_run(job_id=job.pk)
    done = client.get(reverse("exports:detail", args=[job.pk]), headers={"HX-Request": "true"})
    assert "hx-trigger" not in done.content.decode() and "Download csv" in done.content.decode()
    download = client.get(reverse("exports:download", args=[job.pk]))
    assert b"".join(download.streaming_content).startswith(b"problem_id,problem,")
    card = client.get(reverse("exports:download_part", args=[job.pk, "card"]))
    assert b"# Golden pilot: proofbench dataset" in b"".join(card.streaming_content)


def test_page_refuses_a_format_that_does_not_fit(db, client):
    corpus = labelled_campaign()
    client.force_login(UserFactory(username="res-bad", roles=["researcher"]))
    response = client.post(
        reverse("exports:list"),
        {
            "campaign": corpus.campaign.slug,
            "format": "dmv",
            "file_type": "csv",
            "cut_low": 5,
            "cut_high": 7,
        },
    )
    assert response.status_code == 400
    assert "needs an analysis-review campaign" in response.content.decode()
    assert not ExportJob.objects.exists()


def test_download_before_done_is_404_and_list_queries_are_bounded(
    db, client, django_assert_max_num_queries
):
    corpus = labelled_campaign()
    user = UserFactory(username="res-q", roles=["researcher"])
    for _ in range(5):
        ExportJob.objects.create(
            campaign=corpus.campaign, format="dv", file_type="csv", created_by=user
        )
    client.force_login(user)
    job = ExportJob.objects.first()
    assert client.get(reverse("exports:download", args=[job.pk])).status_code == 404
    with django_assert_max_num_queries(8):
        response = client.get(reverse("exports:list"), headers={"HX-Request": "true"})
    assert response.content.decode().count("<tr>") == 6
    assert 'hx-trigger="every 2s"' in response.content.decode()
