"""Streaming dataset writers (JSONL, CSV, Parquet), the manifest and the dataset card.

A writer takes an iterable of row dicts and never holds more than one Parquet row group in
memory. Every file is written under a temporary name in the target folder and renamed only once
it is complete, so a failed or interrupted export never leaves a file that looks finished.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import os
import uuid
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from itertools import accumulate
from pathlib import Path

import orjson

from core.threads import Behind
from core.values import csv_safe

SCHEMA_VERSION = 1
FILE_TYPES = ("jsonl", "csv", "parquet")
DEFAULT_ROW_GROUP = 5000
ROW_GROUP_BYTES = 2 * 1024 * 1024  # a row group is also closed once its JSON reaches this size
PROGRESS_EVERY = 1000

KINDS = ("string", "int", "float", "bool", "json", "struct")


@dataclass(frozen=True)
class Field:
    """One column. `json` columns hold nested data: native in JSONL, JSON text in CSV and Parquet.
    `struct` columns (fixed children) are native in JSONL and Parquet, JSON text in CSV."""

    name: str
    kind: str
    description: str
    children: tuple[Field, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"field {self.name}: unknown kind {self.kind!r}")


def arrow_type(field: Field):
    """The Arrow type of a column (pyarrow is imported only by Parquet exports: it costs about
    50 MB of memory once loaded)."""
    import pyarrow as pa

    if field.kind == "struct":
        return pa.struct([pa.field(c.name, arrow_type(c)) for c in field.children])
    return {
        "string": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
        "json": pa.string(),
    }[field.kind]


def arrow_schema(fields: Iterable[Field]):
    import pyarrow as pa

    return pa.schema([pa.field(f.name, arrow_type(f)) for f in fields])


def _default(value: object) -> object:
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"cannot write a {type(value).__name__} to a dataset")


def dumps(value: object) -> bytes:
    return orjson.dumps(value, default=_default, option=orjson.OPT_NON_STR_KEYS)


@dataclass(frozen=True)
class WriteResult:
    rows: int
    size: int
    sha256: str


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yields a temporary path beside `path`; renames it to `path` only if the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.partial-{uuid.uuid4().hex[:8]}")
    try:
        yield temp
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class _HashingFile(io.RawIOBase):
    """A file written and hashed a few MiB behind the caller (`core.threads.Behind`): the SHA-256 of a large
    JSONL export cost as much CPU as writing it. Used under an io.BufferedWriter (1 MiB
    writes)."""

    def __init__(self, path: Path):
        super().__init__()
        self.handle = path.open("wb", buffering=0)
        self.digest = hashlib.sha256()
        self.behind = Behind(self._write, bound=4, name="export-writer")

    def _write(self, chunk: bytes) -> None:
        self.handle.write(chunk)
        self.digest.update(chunk)

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.behind.put(bytes(data))
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self.behind.close()
            self.handle.close()
            super().close()
        self.behind.check()


@contextlib.contextmanager
def _hashed(path: Path) -> Iterator[tuple[io.BufferedWriter, _HashingFile]]:
    raw = _HashingFile(path)
    try:
        with io.BufferedWriter(raw, buffer_size=1 << 20) as handle:
            yield handle, raw
    finally:
        raw.close()


def write_text_atomic(path: Path, text: str) -> WriteResult:
    data = text.encode("utf-8")
    with atomic_path(path) as temp:
        temp.write_bytes(data)
    return WriteResult(rows=0, size=len(data), sha256=hashlib.sha256(data).hexdigest())


def write_rows(
    *,
    rows: Iterable[dict],
    fields: list[Field],
    file_type: str,
    path: Path,
    row_group_size: int = DEFAULT_ROW_GROUP,
    on_progress: Callable[[int], None] | None = None,
) -> WriteResult:
    """Streams `rows` into `path` (atomically) in the given file type; returns count, size, hash."""
    if file_type not in FILE_TYPES:
        raise ValueError(f"unknown file type {file_type!r}: choose one of {', '.join(FILE_TYPES)}")
    on_progress = on_progress or (lambda n: None)
    with atomic_path(path) as temp:
        if file_type == "parquet":
            count = _write_parquet(rows, fields, temp, row_group_size, on_progress)
            checksum = file_sha256(temp)
        else:
            writer = {"jsonl": _write_jsonl, "csv": _write_csv}[file_type]
            with _hashed(temp) as (handle, raw):
                count = writer(rows, fields, handle, on_progress)
            checksum = raw.digest.hexdigest()
        size = temp.stat().st_size
    return WriteResult(rows=count, size=size, sha256=checksum)


def _write_jsonl(rows, fields, handle, on_progress) -> int:
    names = [f.name for f in fields]
    count = 0
    option = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS
    for row in rows:
        handle.write(orjson.dumps({n: row[n] for n in names}, default=_default, option=option))
        count += 1
        if count % PROGRESS_EVERY == 0:
            on_progress(count)
    on_progress(count)
    return count


def _csv_cell(field: Field, value: object) -> object:
    if value is None:
        return ""
    if field.kind in ("json", "struct"):
        return dumps(value).decode("utf-8")
    if field.kind == "bool":
        return "true" if value else "false"
    return csv_safe(value)


def _write_csv(rows, fields, binary, on_progress) -> int:
    count = 0
    with io.TextIOWrapper(binary, encoding="utf-8", newline="", write_through=True) as handle:
        writer = csv.writer(handle)
        writer.writerow([f.name for f in fields])
        for row in rows:
            writer.writerow([_csv_cell(f, row[f.name]) for f in fields])
            count += 1
            if count % PROGRESS_EVERY == 0:
                on_progress(count)
    on_progress(count)
    return count


def _parquet_line(fields: list[Field]) -> Callable[[dict], bytes]:
    """A row's `fields` as one JSON line for Arrow's JSON reader: `json` columns (at any depth)
    become JSON text, everything else is written as it is."""

    def convert(field: Field, value: object) -> object:
        if value is None:
            return None
        if field.kind == "json":
            return dumps(value).decode("utf-8")
        if field.kind == "struct":
            return {c.name: convert(c, value.get(c.name)) for c in field.children}
        return value

    def plain(field: Field) -> bool:
        return field.kind != "json" and all(plain(c) for c in field.children)

    names = [f.name for f in fields]
    converted = [f for f in fields if not plain(f)]
    option = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS

    def line(row: dict) -> bytes:
        record = {n: row[n] for n in names}
        for f in converted:
            record[f.name] = convert(f, record[f.name])
        return orjson.dumps(record, default=_default, option=option)

    return line


def _string_array(field: Field, values: list):
    """An Arrow string column made from its values' UTF-8 buffers (offsets, data, validity): no
    JSON escaping on the way in nor parsing on the way out, and no pandas (which `pa.array` on
    a Python list imports). A value that is not a string is refused, naming its column."""
    import pyarrow as pa

    count = len(values)
    present = [v for v in values if v is not None] if None in values else values
    try:
        text = "".join(present)
    except TypeError:
        wrong = next(v for v in present if type(v) is not str)
        raise ValueError(
            f"column {field.name}: {type(wrong).__name__} in a string column"
        ) from None
    if text.isascii():  # a character a byte: the lengths are the strings' own
        data = text.encode("ascii")
        sizes = [0 if v is None else len(v) for v in values]
    else:
        encoded = [None if v is None else v.encode("utf-8") for v in values]
        data = b"".join(v for v in encoded if v is not None)
        sizes = [0 if v is None else len(v) for v in encoded]
    validity = None
    if present is not values:
        bits = bytearray((count + 7) // 8)
        for index, value in enumerate(values):
            if value is not None:
                bits[index >> 3] |= 1 << (index & 7)
        validity = pa.py_buffer(bits)
    offsets = array("i", accumulate(sizes, initial=0))
    return pa.StringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data), validity)


def _write_parquet(rows, fields, temp, row_group_size, on_progress) -> int:
    """Each row group is collected column by column: the plain string columns (problem, proof,
    analysis: most of the bytes) as UTF-8 values that become Arrow buffers as they are, the
    other columns as JSON lines (what the JSONL writer writes) parsed by Arrow's own JSON reader
    against their schema. No Python object per cell reaches Arrow, and pyarrow never imports
    pandas. Building and writing a row group happen in a thread of their own (Arrow releases
    the interpreter lock) while the next row group is encoded: on two cores the two overlap.
    At most two row groups wait for it, so memory stays flat."""
    import pyarrow as pa
    import pyarrow.json as pa_json
    import pyarrow.parquet as pq

    # The system allocator hands each freed row group back; Arrow's default (mimalloc) keeps
    # arenas that add to the peak.
    pool = pa.system_memory_pool()
    schema = arrow_schema(fields)
    direct = [f for f in fields if f.kind == "string"]
    names = [f.name for f in direct]
    rest = [f for f in fields if f.kind != "string"]
    parse = pa_json.ParseOptions(
        explicit_schema=arrow_schema(rest), unexpected_field_behavior="error"
    )
    line = _parquet_line(rest)
    count = 0
    lines: list[bytes] = []
    texts: list[dict] = []  # the row group's rows, for its string columns
    grouped = pending_bytes = 0  # rows and bytes of the row group being collected

    def table_of(data: bytes, group: list[dict]):
        arrays = {f.name: _string_array(f, [row[f.name] for row in group]) for f in direct}
        if rest:
            read = pa_json.ReadOptions(use_threads=False, block_size=len(data) + 1)
            parsed = pa_json.read_json(
                pa.BufferReader(data), read_options=read, parse_options=parse, memory_pool=pool
            )
            arrays.update(zip(parsed.column_names, parsed.columns, strict=True))
        return pa.Table.from_arrays([arrays[f.name] for f in fields], schema=schema)

    def flush() -> None:
        nonlocal texts, grouped, pending_bytes
        behind.check()
        if grouped:
            behind.put((b"".join(lines), texts))
            lines.clear()
            texts = []
            grouped = pending_bytes = 0

    with pq.ParquetWriter(temp, schema, compression="snappy", memory_pool=pool) as writer:
        behind = Behind(
            lambda group: writer.write_table(table_of(*group)), bound=2, name="export-parquet"
        )
        try:
            for row in rows:
                if direct:
                    texts.append(row)
                    for name in names:
                        value = row[name]
                        if type(value) is str:
                            pending_bytes += len(value)
                if rest:
                    encoded = line(row)
                    lines.append(encoded)
                    pending_bytes += len(encoded)
                count += 1
                grouped += 1
                if grouped >= row_group_size or pending_bytes >= ROW_GROUP_BYTES:
                    flush()
                if count % PROGRESS_EVERY == 0:
                    on_progress(count)
            flush()
        finally:
            behind.close()
        behind.check()
    on_progress(count)
    return count


# --- Manifest and dataset card ---------------------------------------------------------------


def manifest_bytes(manifest: dict) -> bytes:
    return orjson.dumps(manifest, default=_default, option=orjson.OPT_INDENT_2)


DESIGN_CARD = """
## Sampling design

Each row says how its item came to be graded by experts (`chosen_by`) and with what
probability (`inclusion_probability`), and how its second judgement was decided
(`double_chosen_by`, `double_probability`). A campaign that routes expert effort by
uncertainty labels the most uncertain proofs more often: the expert-labelled rows are then
not a uniform sample of the campaign, and a plain mean of their labels is biased towards the
hard proofs. Weight each expert-labelled row by 1 / `inclusion_probability` (a Horvitz-Thompson
or Hajek mean) to estimate the mean over every item of the campaign; rows labelled
automatically (`chosen_by` = not_chosen) stand for the proofs experts did not see and carry
the automatic label. Rows whose probability is null (routing with no uniform share, or items
ranked before designs were recorded) cannot enter such an estimate. A problem's proofs share
errors: cluster by `problem_id` when computing an interval. Agreement between two judgements
is measured on the double-scored rows; weight them by 1 / `double_probability` to estimate the
whole campaign's agreement when double-scoring was adaptive.
"""


def checkpoints_card(found: dict | None) -> str:
    """The card's section on the checkpoints file (or why there is none)."""
    from adjudication.checkpoints import CSV_COLUMNS

    if not found:
        return (
            "\n## Checkpoints\n\nNo checkpoints file: no grade of the campaign used a marking "
            "scheme's checklist.\n"
        )
    lines = [
        "\n## Checkpoints\n",
        f"`{found['file']}` ({found['rows']} rows, sha256 `{found['sha256']}`): one row per "
        "checkpoint of each marking scheme version the grades used: how well double-scorers "
        "agree on its award and how well its award separates proofs by their final label, each "
        "with a 95% bootstrap interval over the scheme's proofs (the checkpoints page's CSV). "
        "A figure below its minimum of proofs is empty and `note` says why.\n",
        "| column | meaning |\n|---|---|",
    ]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in CSV_COLUMNS]
    return "\n".join(lines) + "\n"


def confidence_card(found: dict | None) -> str:
    """The card's section on `label_confidence`: what it is, the fit and its measured
    calibration, and the caveat where too few held-out cases back it."""
    text = (
        "\n## Label confidence\n\n`label_confidence` is the campaign's rater model's "
        "probability that the item's true class is its label's (a model over every expert and "
        "automatic grader, chosen by held-out log loss; the export refits it first when stale).\n"
    )
    if not found:
        return text + "\nNo fit: the campaign had no judgement to fit, and the column is null.\n"
    text += (
        f"\nFitted {found['fitted_at']} (model `{found['model']}`, temperature "
        f"{found['temperature']:g}); calibration measured on {found['heldout_cases']} held-out "
        "cases."
    )
    if found["checked"]:
        low, high = found["ece_interval"] or (None, None)
        interval = f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
        text += f" Expected calibration error {found['ece']:.3f}{interval} (95% bootstrap).\n"
    else:
        text += f"\n\n**{found['caveat']}**\n"
    return text


def render_card(
    *, title: str, summary: str, fields: list[Field], manifest: dict, sample: dict | None
) -> str:
    """The dataset card (Markdown): what the rows are, their columns, counts, conversions,
    filters, licences and checksums."""
    out = io.StringIO()
    out.write(f"# {title}\n\n{summary}\n\n")
    out.write("## Files\n\n")
    for name, info in manifest.get("files", {}).items():
        out.write(
            f"- `{name}`: {info['rows']} rows, {info['size']} bytes, sha256 `{info['sha256']}`\n"
        )
    out.write("\n## Columns\n\n| column | type | meaning |\n|---|---|---|\n")
    for f in fields:
        kind = f.kind
        if f.kind == "struct":
            kind = "struct{" + ", ".join(f"{c.name}: {c.kind}" for c in f.children) + "}"
        out.write(f"| `{f.name}` | {kind} | {f.description} |\n")
    if any(f.name == "inclusion_probability" for f in fields):
        out.write(DESIGN_CARD)
    if any(f.name == "label_confidence" for f in fields):
        out.write(confidence_card(manifest.get("label_confidence")))
    out.write(checkpoints_card(manifest.get("checkpoints")))
    out.write("\n## Counts\n\n")
    for key, value in manifest.get("counts", {}).items():
        out.write(f"- {key}: {value}\n")
    out.write("\n## Filters\n\n")
    filters = {k: v for k, v in manifest.get("filters", {}).items() if v not in (None, "", [])}
    if filters:
        for key, value in filters.items():
            out.write(f"- {key}: {value}\n")
    else:
        out.write("None: every final label of the campaign.\n")
    out.write("\n## Scale and conversions\n\n")
    out.write(f"Campaign scale: {manifest.get('scale')}.\n")
    maps = manifest.get("scale_maps") or {}
    if maps:
        out.write(f"\n- Onto 0-7: {maps['to_0_7']}.\n- Onto 0 / 0.5 / 1: {maps['to_ternary']}.\n\n")
    conversions = manifest.get("conversions") or []
    if conversions:
        for conversion in conversions:
            out.write(f"- Converted: {conversion['description']}\n")
    else:
        out.write("No value was converted: every score is on the campaign's own scale.\n")
    split = manifest.get("split")
    if split:
        out.write(
            f"\n## Splits\n\nBy problem (no problem in two splits): test share "
            f"{split['test_fraction']}, seed {split['seed']}; the `split` column names each "
            f"row's split.\n"
        )
    licences = manifest.get("licences") or []
    out.write("\n## Licences of the source records\n\n")
    out.write(", ".join(licences) if licences else "Not recorded on the source records.")
    out.write("\n")
    if sample is not None:
        out.write("\n## A sample record\n\n```json\n")
        out.write(orjson.dumps(sample, default=_default, option=orjson.OPT_INDENT_2).decode())
        out.write("\n```\n")
    out.write(
        f"\nSchema version {manifest.get('schema_version')}; exported "
        f"{manifest.get('created_at')} by Proofmark.\n"
    )
    return out.getvalue()
