"""What the API answers, as dataclasses: each names the OpenAPI component it reads (`SCHEMA`),
and its fields are that component's properties, with the same names (the main repository's
tests/clients/test_python_client.py checks them against the served schema). Fields the server
adds later are ignored; numbers the API sends as decimal strings (scores) stay strings."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

T = TypeVar("T", bound="ApiObject")

# The status vocabulary of every background job (jobs.models.JobStatus on the server).
PENDING, RUNNING, RETRYING, SUCCEEDED, FAILED = (
    "pending",
    "running",
    "retrying",
    "succeeded",
    "failed",
)
JOB_DONE = (SUCCEEDED, FAILED)


@dataclass(frozen=True)
class ApiObject:
    SCHEMA: ClassVar[str] = ""
    # fields holding another object of the API: {field: its class}
    NESTED: ClassVar[dict[str, Any]] = {}

    @classmethod
    def from_json(cls: type[T], data: dict[str, Any]) -> T:
        values = {}
        for field in dataclasses.fields(cls):
            if field.name not in data:
                if field.default is not dataclasses.MISSING:
                    continue
                raise ValueError(f"{cls.__name__}: the answer lacks {field.name!r}")
            value = data[field.name]
            nested = cls.NESTED.get(field.name)
            if nested is not None and value is not None:
                value = (
                    [nested.from_json(v) for v in value]
                    if isinstance(value, list)
                    else nested.from_json(value)
                )
            values[field.name] = value
        return cls(**values)


@dataclass(frozen=True)
class ImportCreated(ApiObject):
    SCHEMA: ClassVar[str] = "ImportCreateOutput"
    id: int
    status: str
    status_url: str


@dataclass(frozen=True)
class ImportJob(ApiObject):
    """An import of a corpus file: `counts` says what it made (created / updated / unchanged per
    model), `report` each error and warning with its line."""

    SCHEMA: ClassVar[str] = "ImportJobOutput"
    id: int
    status: str
    original_name: str
    format: str
    dry_run: bool
    licence: str
    processed: int
    total: int | None
    counts: dict[str, Any]
    report: Any
    error: str
    created_at: str
    started_at: str | None
    finished_at: str | None


@dataclass(frozen=True)
class Campaign(ApiObject):
    SCHEMA: ClassVar[str] = "CampaignOutput"
    id: int
    slug: str
    name: str
    task_kind: str
    scale: str
    double_share: str
    double_design: str
    double_uniform_share: str
    sample_seed: int
    tolerance: str
    label_policy: str
    error_taxonomy: Any
    status: str
    lease_minutes: int
    gold_rate: str
    second_opinion: str
    second_opinion_from: str


@dataclass(frozen=True)
class ItemsCreated(ApiObject):
    SCHEMA: ClassVar[str] = "ItemsCreateOutput"
    created: list[int]
    already_present: int
    double_scored: int
    without_scheme: list[str]
    summary: str


@dataclass(frozen=True)
class Item(ApiObject):
    """A campaign item as its expert sees it: the statement, the proof, the scheme if any."""

    SCHEMA: ClassVar[str] = "ItemOutput"
    id: int
    campaign: str
    scale: str
    problem: str
    statement: str
    statement_version: int
    proof_id: int
    proof_text: str
    scheme_id: int | None
    scheme_version: int | None
    scheme_structure: Any
    is_final: bool


@dataclass(frozen=True)
class Grade(ApiObject):
    """A judgement (a draft or submitted): `score` is a decimal string, `version` counts its
    writes."""

    SCHEMA: ClassVar[str] = "GradeOutput"
    id: int
    item: int
    campaign: str
    status: str
    version: int
    score: str | None
    computed_score: str | None
    awards: Any
    deductions: Any
    via_equivalent: Any
    score_note: str
    comment: str
    step_verdicts: Any
    first_wrong_step: int | None
    seconds_spent: int
    submitted_at: str | None
    updated_at: str
    scheme: int | None
    spans: list[dict[str, Any]]
    submit_key: str


@dataclass(frozen=True)
class Judgement(ApiObject):
    """The next item leased to the expert (`next/`), with their grade of it so far and the
    others they may see."""

    SCHEMA: ClassVar[str] = "ItemDetailOutput"
    NESTED: ClassVar[dict[str, Any]] = {"item": Item, "grade": Grade, "other_grades": Grade}
    item: Item
    grade: Grade | None
    other_grades: list[Grade]


@dataclass(frozen=True)
class NoWorkLeft(ApiObject):
    SCHEMA: ClassVar[str] = "NoWorkLeftOutput"
    detail: str
    submitted: int
    drafts: int


@dataclass(frozen=True)
class ExportJob(ApiObject):
    """An export: `manifest` (once done) holds counts, columns, filters and checksums; `layout`
    `hf` also makes a Hugging Face dataset folder (download part `hf`)."""

    SCHEMA: ClassVar[str] = "ExportJobOutput"
    id: int
    campaign: str
    format: str
    file_type: str
    filters: dict[str, Any]
    status: str
    processed: int
    total: int | None
    size: int | None
    sha256: str
    manifest: dict[str, Any]
    error: str
    created_by: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None
    download_url: str | None
    layout: str = "file"  # absent from servers older than the hf layout


# Every type with the component it reads, for the schema check.
TYPES: tuple[type[ApiObject], ...] = (
    ImportCreated,
    ImportJob,
    Campaign,
    ItemsCreated,
    Item,
    Grade,
    Judgement,
    NoWorkLeft,
    ExportJob,
)
