"""Readers of the field's corpus formats, and detection of the format of a path.

`read_path(path, fmt=None)` yields normalised records and issues for a file, a competition
folder, a folder of files (each detected on its own) or a .zip of any of these.

Every record leaves with the licence of its source in `metadata["licence"]`: its own, if the
record states one; else the licence given for the whole import; else the licence of the public
dataset its format comes from (`LICENCES`; none for Proofmark's generic JSONL, nor for a row of a
Proofmark export, which has a `licence` column: blank there means not recorded, not the
dataset's).
"""

from __future__ import annotations

import re
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import IO

import orjson

from problems import pictures
from problems.importers import (
    deepseek,
    generic,
    gradingbench,
    imobench,
    matharena,
    matharena_outputs,
    opc,
    proofbench,
)
from problems.importers.base import (
    AnalysisIn,
    Issue,
    Item,
    ProblemIn,
    Progress,
    ProofIn,
    SolutionIn,
    SourceError,
    Where,
    binary_kind,
    binary_kind_of,
    check_start,
    error,
    first_binary_row,
    json_line,
    picture_max_bytes,
    unstorable_at,
    unstorable_words,
    warning,
)
from problems.importers.jsonstream import JsonStream

READERS: dict[str, Callable[[Path, Progress, str], Iterator[Item]]] = {
    proofbench.NAME: proofbench.read,
    imobench.NAME: imobench.read,
    gradingbench.NAME: gradingbench.read,
    matharena.NAME: matharena.read,
    matharena_outputs.NAME: matharena_outputs.read,
    opc.NAME: opc.read,
    deepseek.NAME: deepseek.read,
    generic.NAME: generic.read,
}
FORMATS = tuple(READERS)
LICENCES: dict[str, str] = {
    proofbench.NAME: proofbench.LICENCE,
    imobench.NAME: imobench.LICENCE,
    gradingbench.NAME: gradingbench.LICENCE,
    matharena.NAME: matharena.LICENCE,
    matharena_outputs.NAME: matharena_outputs.LICENCE,
    opc.NAME: opc.LICENCE,
    deepseek.NAME: deepseek.LICENCE,
    generic.NAME: generic.LICENCE,
}
FILE_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet", ".arrow")
# What `datasets`' save_to_disk writes beside its .arrow files: its own bookkeeping, not records.
DATASETS_BOOKKEEPING = frozenset({"dataset_info.json", "state.json", "dataset_dict.json"})
# A .zip may unpack to MAX_ZIP_BYTES at most, and to MAX_ZIP_RATIO times its own size at most
# (JSON and CSV compress 5 to 20 times; a bomb, thousands of times).
MAX_ZIP_BYTES = 2 * 1024**3
MAX_ZIP_RATIO = 100
SNIFF_BYTES = 65536

__all__ = [
    "FORMATS",
    "LICENCES",
    "AnalysisIn",
    "Issue",
    "ProblemIn",
    "ProofIn",
    "Progress",
    "SolutionIn",
    "SourceError",
    "Where",
    "detect_format",
    "read_path",
    "sniff",
    "source_size",
]


def _first_line(lines) -> bytes:
    """The first line that is not blank (without a UTF-8 BOM), or b""."""
    for raw in lines:
        if raw.strip():
            return raw.removeprefix(b"\xef\xbb\xbf")
    return b""


def _json_object(line: bytes) -> dict | None:
    try:
        value, _ = json_line(line)  # as the reader reads it (a NUL or a bad byte is a record's)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _format_of_first_line(suffix: str, line: bytes) -> str | None:
    """The format a .csv's header or a .jsonl's first line tells, or None."""
    if suffix == ".csv":
        header = line.decode("utf-8", "replace").lower()
        columns = {column.strip().strip('"') for column in header.split(",")}
        return _format_of_record(dict.fromkeys(columns, ""))
    first = _json_object(line)
    if first is None:
        return None
    return _format_of_record(first)


def _format_of_record(first: dict) -> str | None:
    """The format a first record tells (a JSON Lines line, a CSV header, a Parquet or Arrow
    row): the same rules for every row format."""
    keys = {str(key).lower() for key in first}
    if "problem id" in keys and "grading guidelines" in keys:
        if "response" in keys and ("points" in keys or "reward" in keys):
            return gradingbench.NAME
        return imobench.NAME
    if "kind" in first:
        return generic.NAME
    if "model_prediction" in first:
        return deepseek.NAME
    if "reward_model" in first or ("model_id" in first and "prompt" in first):
        return opc.NAME
    if "problem_idx" in first and any(str(key).startswith("points_judge") for key in first):
        return matharena_outputs.NAME
    if "problem_id" in first or "model_solution" in first:
        return proofbench.NAME
    return None


def _json_head(path: Path) -> tuple[str, object] | None:
    """The kind of a JSON file's top-level value ("[" or "{") and its first element (the object
    itself), read as far as that element only; None when it has none or cannot be read."""
    with path.open("rb") as handle:
        stream = JsonStream(handle, path.name, shape="", objects=True)
        try:
            for _where, first in stream:
                return stream.top, first
        except SourceError:
            return None
    return None


def detect_format(path: Path) -> str | None:
    """The format of a file or folder, or None when it cannot be told."""
    if path.is_dir():
        return matharena.NAME if matharena.looks_like(path) else None
    suffix = path.suffix.lower()
    if binary_kind(path):
        first = first_binary_row(path)
        return _format_of_record(first) if first is not None else None
    if suffix == ".csv":
        with path.open("rb") as handle:
            return _format_of_first_line(suffix, handle.readline().removeprefix(b"\xef\xbb\xbf"))
    if suffix == ".jsonl":
        with path.open("rb") as handle:
            return _format_of_first_line(suffix, _first_line(handle))
    if suffix == ".json":
        top, first = _json_head(path) or ("", None)
        if top == "{" and "attempts" in first:
            return opc.NAME
        if top == "[" and isinstance(first, dict):
            if "problem_idx" in first and "question" in first:
                return deepseek.NAME
            if "problem_id" in first and "solutions" in first:
                return opc.NAME
    return None


def source_size(path: Path) -> int:
    if path.is_dir():
        return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())
    return path.stat().st_size


def archive_problem(archive: zipfile.ZipFile, size: int) -> str | None:
    """Why a .zip of `size` bytes is not unpacked (too big, or expanding too much), or None."""
    total = sum(info.file_size for info in archive.infolist())
    if total > MAX_ZIP_BYTES:
        return (
            f"The archive unpacks to {total:,} bytes; the limit is {MAX_ZIP_BYTES:,}: "
            "import its files one by one."
        )
    if total > MAX_ZIP_RATIO * max(size, 1):
        return (
            f"The archive unpacks to {total:,} bytes from {size:,}: more than {MAX_ZIP_RATIO} "
            "times its size, which no corpus file compresses to. Refused (import it unpacked)."
        )
    return None


@contextmanager
def _unpacked(path: Path):
    """A .zip unpacked into a temporary folder (sizes checked, no path escapes)."""
    with zipfile.ZipFile(path) as archive, tempfile.TemporaryDirectory() as folder:
        problem = archive_problem(archive, path.stat().st_size)
        if problem:
            raise SourceError(Where(path.name), problem)
        root = Path(folder).resolve()
        for info in archive.infolist():
            target = (root / info.filename).resolve()
            if not target.is_relative_to(root):
                raise SourceError(Where(path.name), f"Unsafe path in the archive: {info.filename}")
        archive.extractall(root)
        entries = [entry for entry in root.iterdir() if not entry.name.startswith(("__", "."))]
        yield entries[0] if len(entries) == 1 and entries[0].is_dir() else root


def read_path(
    path: Path,
    fmt: str | None = None,
    *,
    progress: Progress,
    name: str | None = None,
    licence: str = "",
    root: Path | None = None,
) -> Iterator[Item]:
    """Records and issues of `path`; whole-source failures come out as one error Issue.
    `licence`, if given, is the licence of the whole source (see the module's docstring).
    `root` is the folder or unpacked archive `path` was found in: pictures are read from files
    there (a single file imported alone ships pictures only as data URLs)."""
    name = name or path.name
    if (at := unstorable_at(name)) is not None:
        yield error(Where(name), "The file's name " + unstorable_words(name, at))
        return
    if not path.exists():
        yield error(Where(name), "No such file or folder.")
        return
    if fmt and fmt not in READERS:
        yield error(Where(name), f"Unknown format {fmt!r}: use one of {', '.join(FORMATS)}.")
        return
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            with _unpacked(path) as folder:
                yield from read_path(
                    folder, fmt, progress=progress, name=name, licence=licence, root=folder
                )
        except zipfile.BadZipFile:
            yield error(Where(name), "Not a readable .zip archive.")
        except SourceError as exc:
            yield exc.issue
        return
    if path.is_dir() and (fmt == matharena.NAME or (fmt is None and matharena.looks_like(path))):
        yield from _read_one(path, matharena.NAME, progress, name, licence, root or path)
        return
    if path.is_dir():
        # competition folders inside (a MathArena `usamo_2025/` beside its `usamo_2025_outputs/`)
        competitions = (
            sorted(d for d in path.rglob("*") if d.is_dir() and matharena.looks_like(d))
            if fmt in (None, matharena.NAME)
            else []
        )
        files = sorted(
            file
            for file in path.rglob("*")
            if file.is_file()
            and file.suffix.lower() in FILE_SUFFIXES
            and not _bookkeeping(file)
            and not any(file.is_relative_to(competition) for competition in competitions)
        )
        if not files and not competitions:
            yield error(
                Where(name), "The folder holds no .jsonl, .json, .csv, .parquet or .arrow file."
            )
        for competition in competitions:
            yield from _read_one(
                competition,
                matharena.NAME,
                progress,
                f"{name}/{competition.relative_to(path).as_posix()}",
                licence,
                root or path,
            )
        for file in files:
            yield from read_path(
                file,
                fmt,
                progress=progress,
                name=f"{name}/{file.relative_to(path).as_posix()}",
                licence=licence,
                root=root or path,
            )
        return
    if path.stat().st_size == 0:
        yield error(Where(name), "The file is empty: nothing to import.")
        return
    if binary_kind(path) is None:
        problem = _start_problem(path, name)
        if problem:
            yield problem
            return
    detected = fmt or detect_format(path)
    if detected is None:
        yield error(
            Where(name),
            "Cannot tell the format of this file: choose one of " + ", ".join(FORMATS) + ".",
        )
        return
    yield from _read_one(path, detected, progress, name, licence, root)


def _bookkeeping(file: Path) -> bool:
    """A `datasets` save_to_disk file that is no data (state.json beside the .arrow files)."""
    return file.name in DATASETS_BOOKKEEPING and any(file.parent.glob("*.arrow"))


def _start_problem(path: Path, name: str) -> Issue | None:
    """A clear message when a text file is empty, UTF-16/32 or binary (bytes that are not UTF-8
    further on are the records' problem: `base.storable_rows`)."""
    with path.open("rb") as handle:
        return _head_problem(handle.read(SNIFF_BYTES), name)


def _complete_lines(head: bytes) -> list[bytes]:
    """The lines of a file's first SNIFF_BYTES that are whole (the last may be cut)."""
    lines = head.split(b"\n")
    return lines[:-1] if len(head) == SNIFF_BYTES else lines


def _head_problem(head: bytes, name: str) -> Issue | None:
    try:
        check_start(Where(name), head)
    except SourceError as exc:
        return exc.issue
    return None


# JSON nested deeper than this (objects and arrays) is refused at the door, with its line: no
# format of the field nests past a handful of levels, and a deep nest costs every reader.
JSON_MAX_DEPTH = 64
_NOT_MARKS = bytes(byte for byte in range(256) if byte not in b'[]{}"')


def _depth(line: bytes) -> int:
    r"""How deep a JSON text nests, its strings left out; all at C speed but the walk over the
    brackets. With the escapes taken out (each `\\` pair, then each `\"`), every quote left
    opens or closes a string, so the text outside strings is every other piece between quotes;
    a line without `\"` has no escaped quote, and is read as it is. Only the brackets and quotes
    are split and joined (one translate first), not the whole text. A JSON string's regex took
    0.36-0.42 s CPU on the 2,000-row upload of benchmarks/corpus.py (14 MB, whose LaTeX braces
    send most lines past lines_problem's count), its unrolled form 0.09-0.10 s, the escapes
    replaced and the whole line split 0.06 s; on the 18,116 lines of the 20,000-row corpus
    (137 MB) that pass the count, that was 0.53-0.56 s CPU, this 0.24-0.26 s (two alternating
    pairs; the upload request in process 1.45-1.62 -> 1.18-1.27 CPU-s, four pairs of runs)."""
    if b'\\"' in line:
        line = line.replace(b"\\\\", b"").replace(b'\\"', b"")
    depth = deepest = 0
    for byte in b"".join(line.translate(None, _NOT_MARKS).split(b'"')[::2]):
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


# A JSON escape the database cannot store once decoded: \u0000, or half of a surrogate pair
# (not preceded by an escaped backslash; a whole pair is one character and stored).
_UNSTORABLE_ESCAPE = re.compile(
    rb"(?<!\\)(?:\\\\)*(\\u0000|\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)
UNSTORABLE_LISTED = 5  # lines named in the refusal; the rest are counted


def _unstorable_in_line(line: bytes, json_text: bool) -> str | None:
    """What on one line of an upload the database cannot store, in words; None when nothing."""
    if b"\x00" in line or not line.isascii():
        text = line.decode("utf-8", "surrogateescape")
        if (at := unstorable_at(text)) is not None:
            return unstorable_words(text.rstrip("\r\n"), at)
    if json_text and b"\\u" in line and (found := _UNSTORABLE_ESCAPE.search(line)):
        escape = found.group(1).decode()
        what = "a NUL character" if escape == "\\u0000" else "half of a surrogate pair"
        return (
            f"holds the escape {escape}, character {found.start(1) + 1}: {what}, which the "
            "database cannot store."
        )
    return None


def lines_problem(
    handle: IO[bytes], *, depth: bool, unstorable: bool, json_text: bool
) -> str | None:
    """What an upload's lines show to be wrong, read whole at the door in one pass, in words: the
    first line nesting deeper than JSON_MAX_DEPTH (with `depth`: JSON and JSON Lines), else the
    lines holding a character the database cannot store (with `unstorable`: a NUL, a byte that is
    not UTF-8, a lone surrogate or, in JSON text, its escape); None when none does. A line is
    counted exactly only where it holds that many brackets at all, and the common line (ASCII,
    no escape) is passed at C speed, so a whole upload is read in about its read time; one pass
    for both checks, not one each (an upload's temporary file yields its lines through Python:
    0.128-0.146 -> 0.118-0.122 CPU-s for the 2,000-row upload in process, two alternating pairs).
    Such a file is refused with its lines instead of accepted and failed later."""
    found, count = [], 0
    try:
        for number, line in enumerate(handle, start=1):
            if (
                depth
                and line.count(b"[") + line.count(b"{") > JSON_MAX_DEPTH
                and (deepest := _depth(line)) > JSON_MAX_DEPTH
            ):
                return (
                    f"line {number} nests {deepest} levels deep; at most {JSON_MAX_DEPTH} are "
                    "accepted."
                )
            if unstorable and (words := _unstorable_in_line(line, json_text)) is not None:
                count += 1
                if len(found) < UNSTORABLE_LISTED:
                    found.append(f"line {number} {words.rstrip('.')}")
    finally:
        handle.seek(0)
    if not found:
        return None
    more = f" ({count - len(found)} more line(s) like these)" if count > len(found) else ""
    return (
        "; ".join(found) + more + ". Fix the file, or choose to import the rest "
        "(skip_unstorable): those records then fail alone, each named in the import's report."
    )


def sniff(
    handle: IO[bytes], name: str, size: int, fmt: str = "", *, unstorable_ok: bool = False
) -> str | None:
    """What is obviously wrong with an upload, read from its start before it is accepted: an
    archive that unpacks too much, a file that is not what its name says (Parquet, JSON, JSON
    Lines), UTF-16 or binary data, a CSV header that is not UTF-8, a first row no format reads;
    None when nothing is. The import reads the whole file later and reports the rest line by
    line: a record that is not UTF-8 or holds a NUL fails alone there, never the upload."""
    suffix = Path(name).suffix.lower()
    head = handle.read(SNIFF_BYTES)
    handle.seek(0)
    if suffix == ".zip":
        try:
            with zipfile.ZipFile(handle) as archive:
                return archive_problem(archive, size)
        except zipfile.BadZipFile:
            return "Not a readable .zip archive."
        finally:
            handle.seek(0)
    kind = binary_kind_of(head[:8])
    if suffix == ".parquet" and kind != "parquet":
        return "Not a Parquet file (no PAR1 at its start)."
    if suffix == ".arrow" and kind != "arrow":
        return "Not an Arrow file (no Arrow IPC signature at its start)."
    if kind:  # read by content, whatever the name; the job reports each row
        return None if fmt else _binary_head_problem(handle, kind)
    problem = _head_problem(head, name)
    if problem:
        return problem.message
    first = _first_line(_complete_lines(head))
    if suffix == ".csv":
        header = first.decode("utf-8", "surrogateescape")
        if (at := unstorable_at(header)) is not None:
            return "The header's column names " + unstorable_words(header, at)
    if suffix == ".json":
        if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"[", b"{")):
            return "Not JSON: a .json file starts with [ or {."
        return lines_problem(handle, depth=True, unstorable=not unstorable_ok, json_text=True)
    if suffix == ".jsonl" and first and _json_object(first) is None:
        return "Not JSON Lines: the first line is not a JSON object."
    if (suffix == ".jsonl" or (suffix == ".csv" and not unstorable_ok)) and (
        bad := lines_problem(
            handle,
            depth=suffix == ".jsonl",
            unstorable=not unstorable_ok,
            json_text=suffix == ".jsonl",
        )
    ):
        return bad
    if not fmt and first and _format_of_first_line(suffix, first) is None:
        return (
            f"Cannot tell the format from the first {'row' if suffix == '.csv' else 'line'}: "
            "choose one of " + ", ".join(FORMATS) + "."
        )
    return None


def _binary_head_problem(handle: IO[bytes], kind: str) -> str | None:
    """What the first row of a Parquet or Arrow upload shows to be wrong: unreadable, empty, or
    of no format (the format is being detected); None when a format reads it."""
    import pyarrow as pa
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    try:
        if kind == "parquet":
            parquet = pq.ParquetFile(handle)
            batch = next(parquet.iter_batches(batch_size=1), None)
        else:
            if handle.read(6) == b"ARROW1":
                handle.seek(0)
                reader = ipc.open_file(handle)
                batch = reader.get_batch(0) if reader.num_record_batches else None
            else:
                handle.seek(0)
                batch = next(iter(ipc.open_stream(handle)), None)
    except (pa.ArrowException, OSError, ValueError) as exc:
        return f"Not a readable {'Parquet' if kind == 'parquet' else 'Arrow'} file: {exc}"
    finally:
        handle.seek(0)
    rows = batch.slice(0, 1).to_pylist() if batch is not None else []
    if not rows:
        return "The file is empty: nothing to import."
    if _format_of_record(rows[0]) is None:
        return (
            "Cannot tell the format from the first row: choose one of " + ", ".join(FORMATS) + "."
        )
    return None


def _read_one(
    path: Path, fmt: str, progress: Progress, name: str, licence: str, root: Path | None = None
) -> Iterator[Item]:
    """The records and issues of one source. A fault that stops the reading (a file that is not
    the format, a JSON list broken in the middle) is one error; the records read before it
    stand, each on its own, and the error says that nothing after it was read."""
    progress.formats.append({"source": name, "format": fmt})
    read = 0
    seen: dict[str, tuple[Where, int]] = {}  # problem id -> where first read, statement hash
    roots, max_bytes = _roots(path, root), picture_max_bytes()
    try:
        for item in READERS[fmt](path, progress, name):
            if not isinstance(item, Issue):
                _stamp_licence(item.metadata, licence, LICENCES[fmt])
                read += 1
                if isinstance(item, ProblemIn) and (repeat := _repeated(item, seen)):
                    yield repeat
                # a picture is shipped as Markdown's ![...](...): most texts hold none, and
                # are passed here without a call (0.02 CPU-s of 2,000 ProofBench rows)
                if (key := TEXT_FIELDS.get(type(item))) and "![" in getattr(item, key):
                    yield from _pictures(item, key, roots, max_bytes)
            yield item
    except SourceError as exc:
        issue = exc.issue
        if read:
            issue = replace(issue, message=f"{issue.message} Nothing after it was read.")
        yield issue


TEXT_FIELDS = {ProblemIn: "statement", SolutionIn: "text", ProofIn: "text"}


def _roots(path: Path, root: Path | None) -> tuple[Path, ...]:
    """Where a source's pictures may be: beside it (its folder; a competition folder and its
    problems/ and solutions/), then anywhere in the folder or archive imported; nowhere for a
    file imported alone (an upload's folder holds other uploads)."""
    if root is None:
        return ()
    own = (path, path / "problems", path / "solutions") if path.is_dir() else (path.parent,)
    return (*own, root)


def _pictures(item: Item, key: str, roots: tuple[Path, ...], max_bytes: int) -> Iterator[Issue]:
    """Reads the pictures the record's text (its field `key`) ships (problems.pictures) onto
    `item.pictures`, the text rewritten to refer to them; a warning for each one refused."""
    refused: list[str] = []
    edits: list[tuple[int, int, int]] = []
    text, found = pictures.resolve(
        getattr(item, key),
        roots=roots,
        max_bytes=max_bytes,
        refuse=refused.append,
        named=item.images,
        edits=edits,
    )
    if found:
        setattr(item, key, text)
        item.pictures.update(found)
        for span in item.metadata.get("imported_error_spans") or []:  # offsets follow the text
            span["start"] = pictures.shifted(span["start"], edits)
            span["end"] = pictures.shifted(span["end"], edits)
    for words in refused:
        yield warning(item.where, words, key)


def _repeated(problem: ProblemIn, seen: dict[str, tuple[Where, int]]) -> Issue | None:
    """A warning naming both lines when a problem id comes again within one file: always for a
    file of problems (one a line), and for rows that repeat their problem beside each proof
    (ProofBench rows) when the statement differs. The later record's fields win (the merge of
    every import); the warning says so."""
    digest = hash(problem.statement)
    first = seen.get(problem.external_id)
    if first is None:
        seen[problem.external_id] = (problem.where, digest)
        return None
    where, first_digest = first
    if problem.primary:
        what = "repeats"
    elif digest != first_digest:
        what = "repeats, with another statement,"
        seen[problem.external_id] = (problem.where, digest)
    else:
        return None
    return warning(
        problem.where,
        f"problem {problem.external_id!r} {what} the id of line {where.line} "
        f"({where}): the two are merged into one problem, this line's fields winning.",
    )


def _stamp_licence(metadata: dict, given: str, default: str) -> None:
    """The record's own licence; else the one given for the import; else the format's dataset
    licence, unless the record says its licence is unknown: a reader leaves `licence` empty (not
    absent) for a row of Proofmark's own export whose licence column is blank, and that row is not
    the public dataset's."""
    if metadata.get("licence") or metadata.get("license"):
        return
    unknown = "licence" in metadata
    metadata.pop("licence", None)
    chosen = given or ("" if unknown else default)
    if chosen:
        metadata["licence"] = chosen
