"""What every reader yields, and the streaming primitives they share.

A reader turns one source (a file or a competition folder) into a stream of normalised
records (`ProblemIn`, `SolutionIn`, `ProofIn`, `AnalysisIn`) and `Issue`s, each carrying the
file and line it came from. Files are read line by line (JSONL, CSV) or a batch of rows at a time
(Parquet), so memory stays flat in the size of the file; whole-JSON files (DeepSeekMath-V2
inputs, OPC problem files) one element of their top-level list at a time (`jsonstream`).
`read_json` parses a whole small document (MathArena's grading_scheme.json).
"""

from __future__ import annotations

import codecs
import csv
import functools
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from llm.scores import strip_think

UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
TOPICS = {
    "algebra": "A",
    "combinatorics": "C",
    "geometry": "G",
    "number theory": "N",
    "number_theory": "N",
    "a": "A",
    "c": "C",
    "g": "G",
    "n": "N",
}
# The marking-scheme formats an import may name (rubrics.structure parses them); all but
# matharena_json are text.
SCHEME_FORMATS = (
    "proofbench_markdown",
    "matharena_json",
    "imobench_guidelines",
    "refgrader_plain",
    "refgrader_approachability",
    "refgrader_milestones",
    "refgrader_hybrid",
)
KEY_MAX = 200  # external ids, generators, verifiers and sample keys are CharField(200)
# What the database cannot store in a text or JSON column: NUL (PostgreSQL refuses it in text and
# in JSON strings) and lone surrogates, which are no characters (UTF-8 cannot encode them). Bytes
# that are not UTF-8 are read as lone surrogates U+DC80-U+DCFF (Python's "surrogateescape"), so
# that they too are named in their record and field instead of failing the file.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
NOT_UTF8 = ("\udc80", "\udcff")


@functools.cache
def max_cell_chars() -> int:
    """The longest text a cell may hold (settings.PROOFMARK_IMPORT_MAX_CELL_CHARS)."""
    return int(getattr(settings, "PROOFMARK_IMPORT_MAX_CELL_CHARS", 2_000_000))


def picture_max_bytes() -> int:
    """The largest picture an import stores (settings.PROOFMARK_PICTURE_MAX_BYTES)."""
    return int(getattr(settings, "PROOFMARK_PICTURE_MAX_BYTES", 5 * 1024 * 1024))


@receiver(setting_changed)
def _forget_cell_limit(*, setting: str, **kwargs) -> None:
    if setting == "PROOFMARK_IMPORT_MAX_CELL_CHARS":
        max_cell_chars.cache_clear()


@dataclass(frozen=True)
class Where:
    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file


@dataclass(frozen=True)
class Issue:
    level: str  # "error" | "warning"
    where: Where
    message: str
    field: str = ""

    def to_dict(self) -> dict:
        """The issue as the report stores it (what cannot be stored shown escaped)."""
        return {
            "level": self.level,
            "file": escaped(self.where.file),
            "line": self.where.line,
            "field": escaped(self.field),
            "message": escaped(self.message),
        }

    def __str__(self) -> str:
        field_part = f" field {self.field!r}:" if self.field else ""
        return escaped(f"{self.level}: {self.where}:{field_part} {self.message}")


def error(where: Where, message: str, field: str = "") -> Issue:
    return Issue("error", where, message, field)


def warning(where: Where, message: str, field: str = "") -> Issue:
    return Issue("warning", where, message, field)


def escaped(text: str) -> str:
    """`text` with each character the database cannot store written as its escape (`\\x00`,
    `\\udce9`): fit for a report, a message or a terminal."""
    if "\x00" not in text and text.isascii():
        return text
    return UNSTORABLE.sub(lambda found: ascii(found.group())[1:-1], text)


def unstorable_at(text: str) -> int | None:
    """Where the first character the database cannot store is in `text`, or None (the common
    case is decided without a regex: no NUL, and ASCII text holds no surrogate)."""
    if "\x00" not in text and text.isascii():
        return None
    found = UNSTORABLE.search(text)
    return found.start() if found else None


def unstorable_words(text: str, at: int) -> str:
    """What the character at `at` is and where, in words."""
    char = text[at]
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    place = f"line {line}, column {column}" if line > 1 else f"character {column}"
    if char == "\x00":
        return f"holds a NUL character (U+0000) at {place}, which the database cannot store."
    if NOT_UTF8[0] <= char <= NOT_UTF8[1]:
        return (
            f"holds the byte 0x{ord(char) - 0xDC00:02x} at {place}, which is not UTF-8: the file "
            "looks like another encoding (e.g. Latin-1 or Windows-1252); save it as UTF-8."
        )
    return (
        f"holds a lone surrogate (U+{ord(char):04X}, half of a UTF-16 pair) at {place}, which "
        "is no character: the database cannot store it."
    )


def unstorable_fields(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """(field path, what is wrong) for each string in `value` (a parsed row: dicts, lists,
    strings; keys included) that holds a character the database cannot store. Paths name the
    source's own fields: `model_prediction.proof`, `analyses[0].text`."""
    if isinstance(value, str):
        if (at := unstorable_at(value)) is not None:
            yield path, unstorable_words(value, at)
    elif isinstance(value, dict):
        for key, inner in value.items():
            name = str(key)
            inner_path = f"{path}.{name}" if path else name
            if (at := unstorable_at(name)) is not None:
                yield inner_path, "the field's name " + unstorable_words(name, at)
            yield from unstorable_fields(inner, inner_path)
    elif isinstance(value, list | tuple):
        for index, inner in enumerate(value):
            yield from unstorable_fields(inner, f"{path}[{index}]")


def storable_rows(rows: Iterable[tuple[Where, object]]) -> Iterator[tuple[Where, object]]:
    """The rows as read, with a row that holds a character the database cannot store replaced
    by one error per such field (file, line, field): the row fails alone, the file goes on.
    CSV, Parquet and whole-JSON lists pass here; JSON Lines in `json_line`, which walks only the
    lines that can hold such a character; whole small files in `read_text`."""
    for where, data in rows:
        if isinstance(data, Issue):
            yield where, data
            continue
        found = list(unstorable_fields(data))
        if not found:
            yield where, data
            continue
        for path, words in found:
            yield where, error(where, words, path)


@dataclass
class ProblemIn:
    where: Where
    external_id: str
    statement: str = ""
    contest: str = ""
    year: int | None = None
    number: str = ""
    topic: str = ""
    final_answer: str = ""
    source: str = ""
    metadata: dict = field(default_factory=dict)
    schemes: list[dict] = field(default_factory=list)
    # False where every row repeats its problem beside a proof (ProofBench rows): a repeated id
    # is then warned about only when the statement differs (`problems.importers.repeats`)
    primary: bool = True
    pictures: dict = field(default_factory=dict)  # sha256 -> problems.pictures.Picture
    images: dict = field(default_factory=dict)  # name -> base64 or data URL, as shipped (OPC)


@dataclass
class SolutionIn:
    where: Where
    problem: str
    text: str
    source: str = ""
    metadata: dict = field(default_factory=dict)
    problem_field: str = "problem_id"  # the field naming the problem, for messages
    pictures: dict = field(default_factory=dict)  # sha256 -> problems.pictures.Picture
    images: dict = field(default_factory=dict)  # name -> base64 or data URL, as shipped (OPC)


@dataclass
class ProofIn:
    where: Where
    problem: str
    generator: str
    sample_key: str
    text: str
    sample_index: int | None = None
    source: str = ""
    metadata: dict = field(default_factory=dict)
    problem_field: str = "problem_id"  # the field naming the problem, for messages
    pictures: dict = field(default_factory=dict)  # sha256 -> problems.pictures.Picture
    images: dict = field(default_factory=dict)  # name -> base64 or data URL, as shipped (OPC)


@dataclass
class AnalysisIn:
    where: Where
    problem: str
    generator: str
    proof_sample_key: str
    verifier: str
    text: str
    sample_key: str = ""
    source: str = ""
    metadata: dict = field(default_factory=dict)
    problem_field: str = "problem_id"  # the field naming the problem, for messages


Record = ProblemIn | SolutionIn | ProofIn | AnalysisIn
Item = Record | Issue


class SourceError(Exception):
    """A whole source cannot be read (empty, not UTF-8, not the format): one clear message."""

    def __init__(self, where: Where, message: str, field: str = ""):
        super().__init__(message)
        self.issue = error(where, message, field)


class ByteCounter(io.RawIOBase):
    """A raw file that counts the bytes read: the progress of an import."""

    def __init__(self, path: Path):
        super().__init__()
        self.raw = path.open("rb", buffering=0)
        self.count = 0

    def readinto(self, buffer) -> int:
        size = self.raw.readinto(buffer)
        self.count += size or 0
        return size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def close(self) -> None:
        self.raw.close()
        super().close()


class Progress:
    """Bytes read so far across the sources of one import (the page's progress bar), and the
    format each source was read as."""

    def __init__(self) -> None:
        self.done = 0
        self.counter: ByteCounter | None = None
        self.formats: list[dict[str, str]] = []  # each source read: its name and format

    def open(self, path: Path) -> io.BufferedReader:
        if self.counter is not None:
            self.done += self.counter.count
        self.counter = ByteCounter(path)
        return io.BufferedReader(self.counter, buffer_size=256 * 1024)

    @property
    def bytes_read(self) -> int:
        return self.done + (self.counter.count if self.counter else 0)


def check_start(where: Where, head: bytes) -> int:
    """Raises SourceError for empty, UTF-16/32 or binary files; returns the length of a UTF-8
    BOM."""
    if not head.strip():
        raise SourceError(where, "The file is empty: nothing to import.")
    if head.startswith(UTF16_BOMS) or _looks_wide(head[:64]):
        raise SourceError(
            where, "The file is UTF-16 or UTF-32 encoded: save it as UTF-8 and import it again."
        )
    if head.startswith(BINARY_SIGNATURES) or _looks_binary(head[:4096]):
        raise SourceError(
            where,
            "This is not a text file (it holds binary data: an image, a PDF, a spreadsheet?): "
            "import JSON Lines, JSON, CSV, Parquet or a .zip of them.",
        )
    return len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0


BINARY_SIGNATURES = (
    b"%PDF",
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF8",
    b"PK\x03\x04",
    b"\xd0\xcf\x11\xe0",
    b"\x1f\x8b",  # gzip
)
CONTROL_BYTES = frozenset(range(32)) - {9, 10, 11, 12, 13}
TEXT_BYTES = frozenset(range(32, 127)) | {9, 10, 13}


def _looks_binary(head: bytes) -> bool:
    """Binary data: control bytes (NUL and the like, not tab or line ends) in more than one
    byte of 20, as in compressed data, images or executables. A few NULs in text are the
    records' problem (`storable_rows`), not the file's."""
    if b"\x00" not in head:
        return False
    return sum(byte in CONTROL_BYTES for byte in head) * 20 > len(head)


def _looks_wide(sample: bytes) -> bool:
    """UTF-16 or UTF-32 text without a byte order mark: plain characters with zero bytes
    between them (a binary file has zero bytes, but not in this pattern)."""
    if len(sample) < 4 or b"\x00" not in sample:
        return False
    for width in (2, 4):
        for offset in range(width):
            chars = sample[offset::width]
            rest = bytes(b for i, b in enumerate(sample) if i % width != offset)
            zeros = rest.count(0) / len(rest)
            text = sum(b in TEXT_BYTES for b in chars) / len(chars)
            if zeros >= 0.75 and text >= 0.75:  # mostly ASCII, a few other characters
                return True
    return False


# A record's metadata beyond this many bytes (as JSON) is refused with its line: a source's
# extra columns are kept for the record's page and exports, not as a store of anything.
METADATA_MAX_BYTES = 64 * 1024


def metadata_too_large(record: object) -> Issue | None:
    """An error naming the record's file, line and field when its metadata is over the bound."""
    metadata = getattr(record, "metadata", None)
    if not metadata:
        return None
    size = len(orjson.dumps(metadata, option=orjson.OPT_NON_STR_KEYS, default=str))
    if size <= METADATA_MAX_BYTES:
        return None
    return error(
        record.where,
        f"its metadata is {size:,} bytes, over the {METADATA_MAX_BYTES:,} a record may carry.",
        "metadata",
    )


@functools.cache
def _no_alias_loader() -> type:
    """PyYAML's safe loader that refuses aliases (`*name`): an alias repeats its anchor's value,
    and a few lines of nested aliases expand to gigabytes (a 'billion laughs'). PyYAML is loaded
    here, when a YAML file is read (MathArena's config.yaml), not by every import."""
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.events.AliasEvent):
                event = self.peek_event()
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"an alias (*{event.anchor}) is not accepted: write the value out",
                    event.start_mark,
                )
            return super().compose_node(parent, index)

    return NoAliasLoader


def yaml_load(text: str) -> object:
    """A YAML document, safely and without aliases (yaml.YAMLError with its mark otherwise)."""
    import yaml

    return yaml.load(text, Loader=_no_alias_loader())  # noqa: S506 (a SafeLoader subclass)


def read_text(path: Path, progress: Progress, name: str) -> str:
    """A whole small text file, checked for emptiness, encoding and what the database cannot
    store (SourceError naming the line: the file is one record)."""
    handle = progress.open(path)
    try:
        data = handle.read()
    finally:
        handle.close()
    skip = check_start(Where(name), data[:4096])
    text = data[skip:].decode("utf-8", "surrogateescape")
    if (at := unstorable_at(text)) is not None:
        raise SourceError(Where(name, text.count("\n", 0, at) + 1), unstorable_words(text, at))
    return text


def read_json(path: Path, progress: Progress, name: str):
    text = read_text(path, progress, name)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        line = text.count("\n", 0, getattr(exc, "pos", 0)) + 1
        raise SourceError(Where(name, line), f"Not valid JSON: {exc.msg}.") from exc


def no_constant(name: str) -> object:
    """JSON's NaN and Infinity are refused (`parse_constant` of the standard library)."""
    raise ValueError(f"{name} is not allowed")


def json_line(raw: bytes) -> tuple[object, list[tuple[str, str]]]:
    """One JSON value from the bytes of a line, and (field path, what is wrong) for each string
    in it that the database cannot store. orjson refuses bytes that are not UTF-8 and lone
    surrogates, so the value it reads can hold only a NUL, and only where the line has one (raw,
    never valid in JSON text, is read as the escape `\\u0000`, or escaped): other lines are not
    walked. A line orjson refuses is read again by the standard library, its bad bytes as lone
    surrogates, so that the field holding them is named; any other fault raises
    `orjson.JSONDecodeError`."""
    suspect = b"\\u0000" in raw
    if b"\x00" in raw:
        raw, suspect = raw.replace(b"\x00", b"\\u0000"), True
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            value = json.loads(raw.decode("utf-8", "surrogateescape"), parse_constant=no_constant)
        except (ValueError, RecursionError):
            raise exc from None
        found = list(unstorable_fields(value))
        if not found:
            raise exc from None  # the standard library is laxer (huge numbers...)
        return value, found
    return value, list(unstorable_fields(value)) if suspect else []


def jsonl_rows(path: Path, progress: Progress, name: str) -> Iterator[tuple[Where, object]]:
    """(where, parsed object) for each non-blank line; a bad line raises nothing but yields an
    Issue, and a line holding what the database cannot store one Issue per such field."""
    handle = progress.open(path)
    limit = max_cell_chars() * 4
    try:
        skip = check_start(Where(name), handle.peek(4096)[:4096])
        handle.read(skip)
        for number, raw in enumerate(handle, start=1):
            where = Where(name, number)
            if not raw.strip():
                continue
            if len(raw) > limit:
                yield (
                    where,
                    error(where, f"The line is {len(raw):,} bytes, over the limit of {limit:,}."),
                )
                continue
            try:
                value, unstorable = json_line(raw)
            except orjson.JSONDecodeError as exc:
                yield where, error(where, f"Not valid JSON: {exc.msg}.")
                continue
            if not unstorable:
                yield where, value
            for field_path, words in unstorable:
                yield where, error(where, words, field_path)
    finally:
        handle.close()


def csv_rows(
    path: Path, progress: Progress, name: str
) -> Iterator[tuple[Where, dict[str, str] | Issue]]:
    """(where, row dict) for each CSV record; `where.line` is the line the record starts on. A
    record holding what the database cannot store (bytes that are not UTF-8 included) is an
    error naming its column (`storable_rows`); a header that does, the file's."""
    return storable_rows(_csv_records(path, progress, name))


def _csv_records(
    path: Path, progress: Progress, name: str
) -> Iterator[tuple[Where, dict[str, str] | Issue]]:
    handle = progress.open(path)
    head = handle.peek(4096)[:4096]
    check_start(Where(name), head)
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", errors="surrogateescape", newline="")
    limit = max_cell_chars()
    previous = csv.field_size_limit(limit + 1)  # process-wide: given back when the file ends
    reader = csv.reader(text)
    try:
        try:
            header = next(reader)
        except StopIteration:
            raise SourceError(Where(name), "The file is empty: nothing to import.") from None
        header = [column.strip() for column in header]
        for column in header:
            if (at := unstorable_at(column)) is not None:
                raise SourceError(
                    Where(name, 1), "The header's column names " + unstorable_words(column, at)
                )
        start = reader.line_num + 1
        while True:
            where = Where(name, start)
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                message = str(exc).rstrip(".")
                if "field larger than field limit" in message:
                    message = f"A cell is over the limit of {limit:,} characters"
                yield where, error(where, f"Bad CSV: {message}. Nothing after it was read.")
                break
            start = reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                yield (
                    where,
                    error(
                        where,
                        f"The record has {len(cells)} cells but the header has {len(header)}.",
                    ),
                )
                continue
            yield where, dict(zip(header, cells, strict=True))
    finally:
        handle.close()
        csv.field_size_limit(previous)


PARQUET_MAGIC = b"PAR1"
PARQUET_BATCH_ROWS = 500
ARROW_FILE_MAGIC = b"ARROW1"
ARROW_STREAM_MAGIC = b"\xff\xff\xff\xff"  # the continuation marker an IPC stream opens with


def binary_kind(path: Path) -> str | None:
    """ "parquet" or "arrow" when the file's first bytes are Parquet's or Arrow IPC's (a file
    or the stream `datasets` writes in `save_to_disk`), whatever its name; None otherwise."""
    try:
        with path.open("rb") as handle:
            head = handle.read(8)
    except OSError:
        return None
    return binary_kind_of(head)


def binary_kind_of(head: bytes) -> str | None:
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    if head.startswith(ARROW_FILE_MAGIC) or head.startswith(ARROW_STREAM_MAGIC):
        return "arrow"
    return None


def parquet_rows(path: Path, progress: Progress, name: str) -> Iterator[tuple[Where, object]]:
    """Rows of a Parquet file, a batch of rows at a time; `line` is the 1-based row number. A row
    holding what the database cannot store is an error naming its column (`storable_rows`)."""
    return storable_rows(_parquet_records(path, progress, name))


def _parquet_records(path: Path, progress: Progress, name: str) -> Iterator[tuple[Where, dict]]:
    import pyarrow.parquet as pq

    handle = progress.open(path)
    try:
        try:
            parquet = pq.ParquetFile(handle)
        except Exception as exc:  # pyarrow raises several types for a bad file
            raise SourceError(Where(name), f"Not a readable Parquet file: {exc}") from exc
        if parquet.metadata.num_rows == 0:
            raise SourceError(Where(name), "The file is empty: nothing to import.")
        number = 0
        # a batch of rows at a time, never a whole row group (a writer's default row group is a
        # million rows: a 200 MB group decoded at once was 515 MiB of memory)
        batches = parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS)
        while True:
            try:
                batch = next(batches, None)
            except Exception as exc:  # pyarrow raises several types for a bad file
                raise SourceError(
                    Where(name, number + 1),
                    f"The Parquet file cannot be read from row {number + 1}: {exc}.",
                ) from exc
            if batch is None:
                break
            for row in batch.to_pylist():
                number += 1
                yield Where(name, number), row
    finally:
        handle.close()


def arrow_rows(path: Path, progress: Progress, name: str) -> Iterator[tuple[Where, object]]:
    """Rows of an Arrow IPC file or stream (the `.arrow` files of a `datasets` `save_to_disk`
    folder), one record batch at a time; `line` is the 1-based row number."""
    return storable_rows(_arrow_records(path, progress, name))


def _arrow_records(path: Path, progress: Progress, name: str) -> Iterator[tuple[Where, dict]]:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    handle = progress.open(path)
    try:
        stream = not handle.peek(8)[:8].startswith(ARROW_FILE_MAGIC)
        try:
            reader = ipc.open_stream(handle) if stream else ipc.open_file(handle)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise SourceError(Where(name), f"Not a readable Arrow file: {exc}") from exc
        batches = (
            iter(reader)
            if stream
            else (reader.get_batch(index) for index in range(reader.num_record_batches))
        )
        number = 0
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except (pa.ArrowException, OSError, ValueError) as exc:
                raise SourceError(
                    Where(name, number + 1), f"The Arrow data cannot be read here: {exc}."
                ) from exc
            for row in batch.to_pylist():
                number += 1
                yield Where(name, number), row
        if number == 0:
            raise SourceError(Where(name), "The file is empty: nothing to import.")
    finally:
        handle.close()


def first_binary_row(path: Path) -> dict | None:
    """The first row of a Parquet or Arrow file (None when it has none or cannot be read): what
    detection reads, as it reads a JSON Lines file's first line."""
    for _where, row in _binary_records(path, Progress(), path.name):
        return row if isinstance(row, dict) else None
    return None


def _binary_records(path: Path, progress: Progress, name: str) -> Iterator[tuple[Where, dict]]:
    try:
        if binary_kind(path) == "parquet":
            yield from _parquet_records(path, progress, name)
        else:
            yield from _arrow_records(path, progress, name)
    except SourceError:
        return


def rows(path: Path, progress: Progress, name: str) -> Iterator[tuple[Where, object]]:
    """The rows of a file wherever rows are read: Parquet and Arrow by their first bytes
    (whatever the name), CSV by its suffix, else JSON Lines."""
    kind = binary_kind(path)
    if kind == "parquet":
        return parquet_rows(path, progress, name)
    if kind == "arrow":
        return arrow_rows(path, progress, name)
    if path.suffix.lower() == ".csv":
        return csv_rows(path, progress, name)
    return jsonl_rows(path, progress, name)


class Row:
    """Field access on one source row, collecting errors that name the line and the field."""

    def __init__(self, where: Where, data: dict, issues: list[Issue]):
        self.where = where
        self.data = data
        self.issues = issues

    def text(self, key: str, *, required: bool = False, think: bool = False) -> str:
        value = self.data.get(key)
        if value is None or (isinstance(value, float) and value != value):
            value = ""
        if not isinstance(value, str):
            if isinstance(value, int | float) and not isinstance(value, bool):
                value = str(value)
            else:
                self.issues.append(error(self.where, "must be text.", key))
                return ""
        if len(value) > max_cell_chars():
            self.issues.append(
                error(
                    self.where,
                    f"{len(value):,} characters, over the limit of {max_cell_chars():,}.",
                    key,
                )
            )
            return ""
        if think:
            value = strip_think(value)
        if required and not value.strip():
            self.issues.append(error(self.where, "missing (required).", key))
        return value

    def key(self, key: str, *, required: bool = False, default: str = "") -> str:
        value = self.text(key, required=required).strip() or default
        if len(value) > KEY_MAX:
            self.issues.append(error(self.where, f"longer than {KEY_MAX} characters.", key))
            return ""
        return value

    def integer(self, key: str, value: object = None) -> int | None:
        value = self.data.get(key) if value is None else value
        if value is None or value == "" or (isinstance(value, float) and value != value):
            return None
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.issues.append(error(self.where, f"{value!r} is not a whole number.", key))
            return None
        if number != int(number):
            self.issues.append(error(self.where, f"{value!r} is not a whole number.", key))
            return None
        return int(number)

    def number(self, key: str, value: object = None) -> float | int | None:
        value = self.data.get(key) if value is None else value
        if value is None or value == "" or (isinstance(value, float) and value != value):
            return None
        if isinstance(value, bool):
            self.issues.append(error(self.where, f"{value!r} is not a number.", key))
            return None
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.issues.append(error(self.where, f"{value!r} is not a number.", key))
            return None
        return int(number) if number == int(number) else number

    def mapping(self, key: str) -> dict:
        value = self.data.get(key)
        if value is None or value == "":
            return {}
        if isinstance(value, str):
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                self.issues.append(error(self.where, "is not a JSON object.", key))
                return {}
        if not isinstance(value, dict):
            self.issues.append(error(self.where, "is not a JSON object.", key))
            return {}
        return value


def unknown_columns(
    where: Where, columns: Iterable[str], known: Iterable[str], fmt: str
) -> Issue | None:
    extra = sorted(set(columns) - set(known))
    if not extra:
        return None
    return warning(
        where,
        f"Unknown column(s) ignored by the {fmt} format: {', '.join(extra)}.",
    )


def object_rows(
    rows: Iterable[tuple[Where, object]],
    known: Iterable[str],
    fmt: str,
    pattern: re.Pattern | None = None,
) -> Iterator[tuple[Where, dict] | Issue]:
    """The rows that are objects, as (where, data); the reader's issues pass through, a row that
    is not an object is an error, and each unknown column is warned about once, where first seen
    (a column that `pattern` matches is known: `points_judge_2`, `expert_rating_3`)."""
    warned: set[str] = set()
    known = frozenset(known)
    for where, data in rows:
        if isinstance(data, Issue):
            yield data
            continue
        if not isinstance(data, dict):
            yield error(where, "The line is not a JSON object.")
            continue
        extra = data.keys() - known  # one set difference a row; usually empty
        if extra and pattern is not None:
            extra = {column for column in extra if not pattern.match(str(column))}
        if extra and (unknown := unknown_columns(where, extra - warned, known, fmt)):
            warned.update(extra)
            yield unknown
        yield where, data


def topic_of(value: str) -> str:
    return TOPICS.get(value.strip().lower(), "")


def clean_json(value: object) -> object:
    """A value as it will read back from a JSON column (tuples to lists, NaN to None)."""
    return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS, default=str))
