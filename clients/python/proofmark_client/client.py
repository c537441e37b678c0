"""The client: one `Proofmark` per server and token, one method per operation of the API.

    pm = Proofmark("https://proofmark.example.org", token="...")
    job = pm.import_file("corpus.jsonl")              # uploads, waits for the import job
    export = pm.export("pilot", format="dv", file_type="parquet")   # waits for the export job
    frame = export.to_pandas()

A refused request raises ProofmarkError with the status and the API's error body; a job that
failed raises JobFailed, one still running at the deadline JobTimeout (both ProofmarkErrors).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import requests

from proofmark_client.errors import JobFailed, JobTimeout, ProofmarkError
from proofmark_client.types import (
    FAILED,
    JOB_DONE,
    Campaign,
    ExportJob,
    Grade,
    ImportCreated,
    ImportJob,
    ItemsCreated,
    Judgement,
    NoWorkLeft,
)

API = "/api/v1"
J = TypeVar("J")

# Every operation the client calls: (method, path as the OpenAPI schema spells it, the request
# body's component or None, the fields of it the client may send, the answer's component).
# tests/clients/test_python_client.py checks each against the served schema.
OPERATIONS: dict[str, tuple[str, str, str | None, tuple[str, ...], str | None]] = {
    "import_create": (
        "post",
        f"{API}/imports/",
        "ImportCreateInput",
        ("file", "format", "dry_run", "skip_unstorable", "licence"),
        "ImportCreateOutput",
    ),
    "import_detail": ("get", f"{API}/imports/{{job_id}}/", None, (), "ImportJobOutput"),
    "campaign_create": (
        "post",
        f"{API}/campaigns/",
        "CampaignCreateInput",
        (
            "name",
            "slug",
            "task_kind",
            "scale",
            "double_share",
            "tolerance",
            "label_policy",
            "guidelines",
            "experts",
        ),
        "CampaignOutput",
    ),
    "items_create": (
        "post",
        f"{API}/campaigns/{{slug}}/items/",
        "ItemsCreateInput",
        ("proof_ids", "contest", "year", "generator", "problem", "required_judgements", "all"),
        "ItemsCreateOutput",
    ),
    "next_item": ("post", f"{API}/campaigns/{{slug}}/next/", None, (), "NextItemOutput"),
    "grade_submit": (
        "post",
        f"{API}/items/{{item_id}}/submit/",
        "GradeSubmitInput",
        (
            "score",
            "awards",
            "deductions",
            "comment",
            "score_note",
            "step_verdicts",
            "first_wrong_step",
            "seconds_spent",
            "spans",
            "submit_key",
            "origin_page",
        ),
        "GradeSubmitOutput",
    ),
    "export_create": (
        "post",
        f"{API}/exports/",
        "ExportCreateInput",
        ("campaign", "format", "file_type", "filters", "layout"),
        "ExportJobOutput",
    ),
    "export_detail": ("get", f"{API}/exports/{{job_id}}/", None, (), "ExportJobOutput"),
    "export_download": ("get", f"{API}/exports/{{job_id}}/download/", None, (), None),
}


class Proofmark:
    """A Proofmark server, reached with one user's API token (`Authorization: Token KEY`; an
    admin makes one with `manage.py drf_create_token USERNAME`). What the calls may do is what
    the token's user may: admins import and make campaigns, experts grade, researchers and
    admins export."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 60.0,
        session: requests.Session | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"
        self.session.headers.setdefault("Accept", "application/json")
        # names this client's writes (a grading conflict says "this page" for its own)
        self.run_id = uuid.uuid4().hex

    @classmethod
    def from_env(cls, **kwargs: Any) -> Proofmark:
        """From PROOFMARK_URL and PROOFMARK_TOKEN."""
        try:
            return cls(os.environ["PROOFMARK_URL"], os.environ["PROOFMARK_TOKEN"], **kwargs)
        except KeyError as exc:
            raise ProofmarkError(0, {"detail": f"{exc.args[0]} is not set"}) from None

    # --- the wire ------------------------------------------------------------------------------

    def _request(self, operation: str, *, at: dict | None = None, **kwargs: Any):
        """Sends `operation` (OPERATIONS), its path filled from `at`; `kwargs` go to requests."""
        method, template, *_ = OPERATIONS[operation]
        path = template.format(**(at or {}))
        kwargs.setdefault("timeout", self.timeout)
        try:
            response = self.session.request(method.upper(), self.url + path, **kwargs)
        except requests.RequestException as exc:
            raise ProofmarkError(0, {"detail": f"{method.upper()} {path}: {exc}"}) from exc
        if response.status_code >= 400:
            raise ProofmarkError.from_response(response)
        return response

    def _json(self, operation: str, **kwargs: Any) -> Any:
        return self._request(operation, **kwargs).json()

    def schema(self) -> dict:
        """The OpenAPI schema the server serves (`/api/schema/`)."""
        response = self.session.get(
            f"{self.url}/api/schema/",
            params={"format": "json"},
            headers={"Accept": "application/vnd.oai.openapi+json"},
            timeout=self.timeout,
        )
        if response.status_code >= 400:
            raise ProofmarkError.from_response(response)
        return response.json()

    # --- waiting for a job ---------------------------------------------------------------------

    @staticmethod
    def _wait(read: Callable[[], J], *, what: str, timeout: float, interval: float) -> J:
        deadline = time.monotonic() + timeout
        while True:
            job = read()
            if job.status in JOB_DONE:  # type: ignore[attr-defined]
                if job.status == FAILED:  # type: ignore[attr-defined]
                    raise JobFailed(what, job)
                return job
            if time.monotonic() >= deadline:
                raise JobTimeout(what, job, timeout)
            time.sleep(interval)

    # --- imports -------------------------------------------------------------------------------

    def import_start(
        self,
        path: str | os.PathLike,
        *,
        format: str = "",
        dry_run: bool = False,
        licence: str = "",
        skip_unstorable: bool = False,
    ) -> ImportCreated:
        """Uploads a corpus file (any format Proofmark reads; detected by its content unless
        `format` names it) as an import job; admins only."""
        path = Path(path)
        data = {
            "format": format,
            "dry_run": str(dry_run).lower(),
            "skip_unstorable": str(skip_unstorable).lower(),
            "licence": licence,
        }
        with path.open("rb") as handle:
            body = self._json("import_create", data=data, files={"file": (path.name, handle)})
        return ImportCreated.from_json(body)

    def import_job(self, job_id: int) -> ImportJob:
        return ImportJob.from_json(self._json("import_detail", at={"job_id": job_id}))

    def import_wait(
        self, job_id: int, *, timeout: float = 600.0, interval: float = 0.5
    ) -> ImportJob:
        """The import once it has finished; JobFailed if it failed."""
        return self._wait(
            lambda: self.import_job(job_id),
            what=f"import {job_id}",
            timeout=timeout,
            interval=interval,
        )

    def import_file(
        self, path: str | os.PathLike, *, timeout: float = 600.0, **options: Any
    ) -> ImportJob:
        """Uploads a corpus file and waits for its import (options as `import_start`)."""
        started = self.import_start(path, **options)
        return self.import_wait(started.id, timeout=timeout)

    # --- campaigns and grading -----------------------------------------------------------------

    def campaign_create(
        self, name: str, *, slug: str = "", experts: Iterable[str] = (), **settings: Any
    ) -> Campaign:
        """A new campaign (admins): `scale`, `double_share`, `tolerance`, `task_kind`,
        `label_policy`, `guidelines` as the API takes them; `experts` by username."""
        body = {"name": name, "slug": slug, "experts": list(experts), **settings}
        return Campaign.from_json(self._json("campaign_create", json=body))

    def items_add(
        self,
        campaign: str,
        *,
        proof_ids: Iterable[int] | None = None,
        all: bool = False,
        **selection: Any,
    ) -> ItemsCreated:
        """Adds proofs to a campaign as items to grade (admins): by id, by a filter (`contest`,
        `year`, `generator`, `problem`) or the whole corpus (`all=True`)."""
        body: dict[str, Any] = {"all": all, **selection}
        if proof_ids is not None:
            body["proof_ids"] = list(proof_ids)
        answer = self._json("items_create", at={"slug": campaign}, json=body)
        return ItemsCreated.from_json(answer)

    def next_judgement(self, campaign: str) -> Judgement | None:
        """Leases the next item of the campaign to this expert: the item (with their grade of
        it so far), or None when no work is left for them."""
        body = self._json("next_item", at={"slug": campaign})
        if "item" not in body:
            NoWorkLeft.from_json(body)  # the other answer the schema allows, checked
            return None
        return Judgement.from_json(body)

    def submit_judgement(
        self,
        item_id: int,
        *,
        score: float | str | None = None,
        comment: str = "",
        submit_key: str | None = None,
        **fields: Any,
    ) -> Grade:
        """Submits a judgement of a leased item. Idempotent: sent again with the same
        `submit_key` (one is made when not given) it returns the grade already stored. On a
        checklist item leave `score` out and give `awards` (and `deductions`)."""
        body: dict[str, Any] = {
            "comment": comment,
            "submit_key": submit_key or uuid.uuid4().hex,
            "origin_page": self.run_id,
            **fields,
        }
        if score is not None:
            body["score"] = str(score)
        answer = self._json("grade_submit", at={"item_id": item_id}, json=body)
        return Grade.from_json(answer)

    # --- exports -------------------------------------------------------------------------------

    def export_start(
        self,
        campaign: str,
        *,
        format: str,
        file_type: str = "parquet",
        filters: dict[str, Any] | None = None,
        layout: str = "file",
    ) -> ExportJob:
        """Queues an export of the campaign's labels (researchers, admins): `format` proofbench,
        dv, dmv, annotations, judgements or pairs; `file_type` jsonl, csv or parquet; `layout`
        hf for a Hugging Face dataset folder too."""
        body = {
            "campaign": campaign,
            "format": format,
            "file_type": file_type,
            "filters": filters or {},
            "layout": layout,
        }
        return ExportJob.from_json(self._json("export_create", json=body))

    def export_job(self, job_id: int) -> ExportJob:
        return ExportJob.from_json(self._json("export_detail", at={"job_id": job_id}))

    def export_wait(
        self, job_id: int, *, timeout: float = 600.0, interval: float = 0.5
    ) -> ExportJob:
        return self._wait(
            lambda: self.export_job(job_id),
            what=f"export {job_id}",
            timeout=timeout,
            interval=interval,
        )

    def export(self, campaign: str, *, timeout: float = 600.0, **options: Any) -> Export:
        """Runs an export (options as `export_start`) and waits for it."""
        started = self.export_start(campaign, **options)
        return Export(self, self.export_wait(started.id, timeout=timeout))

    def export_download(
        self, job_id: int, folder: str | os.PathLike, *, part: str = "data"
    ) -> Path:
        """Saves an export's file (`part`: data, manifest, card, pictures, checkpoints or hf)
        into `folder` under the name the server gives it; returns its path."""
        response = self._request(
            "export_download", at={"job_id": job_id}, params={"part": part}, stream=True
        )
        return _save(response, Path(folder))


def _save(response: requests.Response, folder: Path) -> Path:
    disposition = response.headers.get("Content-Disposition", "")
    name = "download"
    for piece in disposition.split(";"):
        key, _, value = piece.strip().partition("=")
        if key == "filename":
            name = Path(value.strip('"')).name or name
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    with target.open("wb") as handle:
        for chunk in response.iter_content(1 << 20):
            handle.write(chunk)
    return target


class Export:
    """A finished export: its job, its files downloaded on demand, and loaders."""

    def __init__(self, client: Proofmark, job: ExportJob) -> None:
        self.client = client
        self.job = job
        self._folder: Path | None = None

    @property
    def folder(self) -> Path:
        """Where its files are downloaded (a temporary folder unless `download` named one)."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix=f"proofmark-export-{self.job.id}-"))
        return self._folder

    def download(self, folder: str | os.PathLike | None = None, *, part: str = "data") -> Path:
        if folder is not None:
            self._folder = Path(folder)
        return self.client.export_download(self.job.id, self.folder, part=part)

    def hf_folder(self, folder: str | os.PathLike | None = None) -> Path:
        """The Hugging Face dataset folder of an export made with layout hf, unpacked."""
        if self.job.layout != "hf":
            raise ProofmarkError(
                0, {"detail": f"export {self.job.id} has layout {self.job.layout}, not hf"}
            )
        target = Path(folder) if folder is not None else self.folder / "hf"
        bundle = self.client.export_download(self.job.id, self.folder, part="hf")
        if target.exists():
            shutil.rmtree(target)
        with zipfile.ZipFile(bundle) as archive:
            archive.extractall(target)
        return target

    def to_pandas(self):
        """The rows as a pandas DataFrame (the `pandas` extra)."""
        import pandas as pd

        path = self.download()
        if self.job.file_type == "parquet":
            return pd.read_parquet(path)
        if self.job.file_type == "jsonl":
            return pd.read_json(path, lines=True, dtype=False)
        return pd.read_csv(path, keep_default_na=False)

    def to_dataset(self):
        """The rows as a Hugging Face `datasets.DatasetDict` (the `datasets` extra): its splits
        as the export made them when its layout is hf, else one `train` split."""
        import datasets

        if self.job.layout == "hf":
            return datasets.load_dataset(str(self.hf_folder()))
        path = self.download()
        builder = {"jsonl": "json", "parquet": "parquet", "csv": "csv"}[self.job.file_type]
        return datasets.load_dataset(builder, data_files={"train": str(path)})
