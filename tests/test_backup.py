"""Backup and restore as docs/deploying.md gives them: `pg_dump` of the database and a copy of
the stored files, restored into a fresh database and storage, give byte-identical exports, and
an export file made before the backup still downloads from the restored site."""

import hashlib
import os
import shutil
import subprocess
import sys

import pytest
from django.db import connection

from exports.models import ExportJob
from exports.services import export_create, export_run
from tests.conftest import ROOT
from tests.exports.factories import labelled_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def url_of(name: str) -> str:
    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST']}:{s['PORT']}/{name}"


def manage(*args: str, env: dict) -> str:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, **env, "DEBUG": "true"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_a_restore_into_a_fresh_database_and_storage_gives_the_same_exports(tmp_path, settings):
    media, restored_media = tmp_path / "media", tmp_path / "restored-media"
    settings.MEDIA_ROOT = media
    corpus = labelled_campaign(slug="backup-pilot")
    job = export_create(
        user=UserFactory(roles=["researcher"]),
        campaign=corpus.campaign,
        fmt="dv",
        file_type="csv",
        filters={},
    )
    export_run(job_id=job.pk)
    job = ExportJob.objects.get(pk=job.pk)
    assert job.status == "succeeded", job.error
    source = {"DATABASE_URL": url_of(connection.settings_dict["NAME"]), "MEDIA_ROOT": str(media)}
    before = tmp_path / "before.jsonl"
    manage("export_dataset", "--campaign=backup-pilot", "--format=proofbench",
           "--file-type=jsonl", f"--out={before}", env=source)  # fmt: skip

    # the backup, as the manual writes it
    dump = tmp_path / "proofmark.dump"
    subprocess.run(["pg_dump", "--format=custom", f"--file={dump}", source["DATABASE_URL"]],
                   check=True)  # fmt: skip
    shutil.copytree(media, restored_media)
    # the restore into a fresh database
    fresh = f"{connection.settings_dict['NAME']}_restored"
    admin = url_of("postgres")
    subprocess.run(["psql", admin, "-qc", f'DROP DATABASE IF EXISTS "{fresh}"'], check=True)
    subprocess.run(["psql", admin, "-qc", f'CREATE DATABASE "{fresh}"'], check=True)
    try:
        subprocess.run(["pg_restore", "--no-owner", f"--dbname={url_of(fresh)}", str(dump)],
                       check=True)  # fmt: skip
        restored = {"DATABASE_URL": url_of(fresh), "MEDIA_ROOT": str(restored_media)}
        after = tmp_path / "after.jsonl"
        manage("export_dataset", "--campaign=backup-pilot", "--format=proofbench",
               "--file-type=jsonl", f"--out={after}", env=restored)  # fmt: skip
        assert after.read_bytes() == before.read_bytes()
        # the old export's file, read back through the restored site's storage
        read = (
            "import django, hashlib; django.setup(); "
            "from django.core.files.storage import default_storage; "
            "from exports.models import ExportJob; "
            f"job = ExportJob.objects.get(pk={job.pk}); "
            "print(hashlib.sha256(default_storage.open(job.file).read()).hexdigest(), job.sha256)"
        )
        out = subprocess.run(
            [sys.executable, "-c", read],
            cwd=ROOT,
            env={**os.environ, **restored, "DJANGO_SETTINGS_MODULE": "config.settings"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        stored = hashlib.sha256((media / job.file).read_bytes()).hexdigest()
        assert out == [stored, stored]
    finally:
        subprocess.run(["psql", admin, "-qc", f'DROP DATABASE IF EXISTS "{fresh}"'], check=True)
