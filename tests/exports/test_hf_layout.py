"""An export as a Hugging Face dataset folder (layout hf): `datasets.load_dataset(folder)` reads
it offline with the splits, row counts and feature types the card's YAML header names; the job
serves it as a .zip (part hf); a file type the layout cannot hold is a 400 naming the layout."""

import io
import zipfile
from collections import Counter

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.urls import reverse

from exports.formats import split_of
from exports.models import ExportJob
from exports.services import export_file_open, export_run
from tests.conftest import as_job
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory


@pytest.fixture
def offline_hf(tmp_path, monkeypatch):
    """`datasets` with no network and its caches in the test's folder."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-home" / "datasets"))
    import datasets

    return datasets


def seed_with_both_splits(slug: str) -> int:
    """A split seed that puts the factory's two problems in different splits."""
    ids = [f"{slug.upper()}-1", f"{slug.upper()}-2"]
    for seed in range(100):
        if {split_of(i, seed, 0.5) for i in ids} == {"train", "test"}:
            return seed
    raise AssertionError("no seed in 0..99 splits the two problems")


def card_header(folder) -> dict:
    text = (folder / "README.md").read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


@pytest.mark.parametrize("file_type", ["parquet", "jsonl"])
def test_the_command_writes_a_folder_datasets_loads_offline(db, tmp_path, offline_hf, file_type):
    corpus = labelled_campaign()
    seed = seed_with_both_splits(corpus.campaign.slug)
    folder = tmp_path / "pb-hf"
    call_command(
        "export_dataset",
        "--campaign",
        corpus.campaign.slug,
        "--format",
        "proofbench",
        "--file-type",
        file_type,
        "--out",
        str(folder),
        "--layout",
        "hf",
        "--test-fraction",
        "0.5",
        "--split-seed",
        str(seed),
    )
    expected = Counter(split_of(item.proof.problem.external_id, seed, 0.5) for item in corpus.items)
    names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert names == [
        "README.md",
        "checkpoints.csv",
        f"data/test-00000-of-00001.{file_type}",
        f"data/train-00000-of-00001.{file_type}",
        "manifest.json",
    ]
    header = card_header(folder)
    readme = (folder / "README.md").read_text()
    assert f"- `data/train-00000-of-00001.{file_type}`: {expected['train']} rows" in readme
    assert "`checkpoints.csv` (" in readme  # the card names the folder's files, not the export's
    assert f"golden-pilot-proofbench.{file_type}" not in readme
    assert header["configs"][0]["data_files"] == [
        {"split": "train", "path": "data/train-*"},
        {"split": "test", "path": "data/test-*"},
    ]
    assert header["pretty_name"] == "Golden pilot: proofbench dataset"
    assert header["license"] == "other"  # two licences of the source records: CC-BY-4.0, MIT
    assert header["task_categories"] == ["text-classification"]
    assert header["size_categories"] == ["n<1K"]

    loaded = offline_hf.load_dataset(str(folder))
    assert {name: len(split) for name, split in loaded.items()} == dict(expected)
    features = loaded["train"].features
    assert features["expert_rating"].dtype == "int64"
    assert features["problem_id"].dtype == "string"
    assert features["label_confidence"].dtype == "float64"
    assert features["metadata"]["contest_year"].dtype == "int64"  # a struct stays nested
    declared = {f["name"] for f in header["dataset_info"]["features"]}
    assert set(features) == declared
    ratings = sorted(r for split in loaded.values() for r in split["expert_rating"])
    assert ratings == [2, 5, 7]
    assert all(row["split"] == "test" for row in loaded["test"])


def test_the_command_refuses_csv_and_a_folder_that_is_not_empty(db, tmp_path):
    corpus = labelled_campaign()
    args = ["--campaign", corpus.campaign.slug, "--format", "dv", "--layout", "hf"]
    with pytest.raises(CommandError, match="layout hf: file type parquet or jsonl"):
        call_command("export_dataset", *args, "--file-type", "csv", "--out", str(tmp_path / "x"))
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(CommandError, match="not empty"):
        call_command(
            "export_dataset", *args, "--file-type", "jsonl", "--out", str(tmp_path / "full")
        )
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"


def test_a_job_with_layout_hf_serves_the_folder_as_a_zip(
    db, tmp_path, settings, offline_hf, api_client_for
):
    settings.MEDIA_ROOT = tmp_path / "media"
    corpus = labelled_campaign()
    researcher = UserFactory(username="res-hf", roles=["researcher"])
    client = api_client_for(researcher)
    refused = client.post(
        "/api/v1/exports/",
        {"campaign": corpus.campaign.slug, "format": "dv", "file_type": "csv", "layout": "hf"},
        format="json",
    )
    assert refused.status_code == 400 and "layout hf" in refused.json()["detail"]
    unknown = client.post(
        "/api/v1/exports/",
        {"campaign": corpus.campaign.slug, "format": "dv", "file_type": "csv", "layout": "tar"},
        format="json",
    )
    assert unknown.status_code == 400 and "layout" in unknown.json()

    job = ExportJob.objects.create(
        campaign=corpus.campaign,
        format="dv",
        file_type="parquet",
        layout="hf",
        created_by=researcher,
    )
    job = as_job("export", job.pk, lambda: export_run(job_id=job.pk))
    assert job.status == "succeeded", job.error
    assert job.manifest["hf"]["splits"]["train"]["rows"] == 3
    detail = client.get(f"/api/v1/exports/{job.pk}/").json()
    assert detail["layout"] == "hf"
    answer = client.get(f"/api/v1/exports/{job.pk}/download/", {"part": "hf"})
    assert answer.status_code == 200
    body = b"".join(answer.streaming_content)
    folder = tmp_path / "unpacked"
    zipfile.ZipFile(io.BytesIO(body)).extractall(folder)
    loaded = offline_hf.load_dataset(str(folder))
    assert list(loaded) == ["train"] and loaded["train"].num_rows == 3
    assert loaded["train"].features["score"].dtype == "float64"
    assert sorted(loaded["train"]["score"]) == [0.0, 0.5, 1.0]  # 2, 5, 7 on 0-7, cuts 5 and 7

    plain = ExportJob.objects.create(
        campaign=corpus.campaign, format="dv", file_type="jsonl", created_by=researcher
    )
    plain = as_job("export", plain.pk, lambda: export_run(job_id=plain.pk))
    with pytest.raises(FileNotFoundError):  # a job of layout file has no folder to serve
        export_file_open(plain, "hf")


def test_the_page_offers_the_layout_and_the_folder(
    db, client, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    corpus = labelled_campaign()
    client.force_login(UserFactory(username="res-hf-page", roles=["researcher"]))
    form = {
        "campaign": corpus.campaign.slug,
        "format": "proofbench",
        "file_type": "csv",
        "layout": "hf",
        "cut_low": 5,
        "cut_high": 7,
    }
    refused = client.post(reverse("exports:list"), form)
    assert refused.status_code == 400 and "layout hf: file type" in refused.content.decode()
    assert not ExportJob.objects.exists()
    with django_capture_on_commit_callbacks(execute=False):
        made = client.post(reverse("exports:list"), {**form, "file_type": "jsonl"})
    job = ExportJob.objects.get()
    assert made.status_code == 302 and job.layout == "hf"
    export_run(job_id=job.pk)
    done = client.get(reverse("exports:detail", args=[job.pk])).content.decode()
    link = reverse("exports:download_part", args=[job.pk, "hf"])
    assert f'href="{link}"' in done
    bundle = b"".join(client.get(link).streaming_content)
    names = zipfile.ZipFile(io.BytesIO(bundle)).namelist()
    assert "README.md" in names and "data/train-00000-of-00001.jsonl" in names


def test_an_export_with_no_row_is_refused_with_the_reason(db, tmp_path):
    """`datasets` cannot load a split with no row: no folder is written."""
    corpus = labelled_campaign()
    folder = tmp_path / "empty"
    with pytest.raises(CommandError, match="layout hf: no row matches the filters"):
        call_command(
            "export_dataset",
            *("--campaign", corpus.campaign.slug, "--format", "dv", "--file-type", "parquet"),
            *("--out", str(folder), "--layout", "hf", "--contest", "No Such Contest"),
        )
    assert not folder.exists()
