"""Pictures a source ships with a problem or a proof, found in its text (no Django).

A text refers to a picture by a Markdown image, `![alt](src)`. At import, an image whose `src`
is a data URL (`data:image/png;base64,...`) or names a file beside the source (in its folder or
in the uploaded archive) is read, checked and rewritten to `picture:<sha256>`: the picture is
stored once by its content (`problems.services.pictures`) and the renderer shows it inline. A
picture is accepted only when its first bytes are PNG, JPEG, GIF or WebP (`picture_type`): never
SVG (it can hold script), never what a name or a data URL merely claims; and only up to
PROOFMARK_PICTURE_MAX_BYTES. An image at an external address is never fetched: it stays a link.
A picture refused is a warning naming its file, line and field; its reference is left as written.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

# (content type, file extension) by the first bytes
SIGNATURES: tuple[tuple[bytes, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png", "png"),
    (b"\xff\xd8\xff", "image/jpeg", "jpg"),
    (b"GIF87a", "image/gif", "gif"),
    (b"GIF89a", "image/gif", "gif"),
)
TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
REFERENCE = "picture:"
# ![alt](src "title"): the src up to whitespace or the closing parenthesis (a data URL has none)
IMAGE = re.compile(
    r"!\[(?P<alt>[^\]\n]*)\]\(\s*<?(?P<src>[^\s)>]+)>?(?P<title>\s+\"[^\"\n]*\")?\s*\)"
)
STORED = re.compile(r"picture:([0-9a-f]{64})")
DATA_URL = re.compile(r"^data:(?P<type>[\w.+-]+/[\w.+-]+)?(?P<params>(?:;[\w=.+-]+)*),", re.I)


def picture_type(data: bytes) -> tuple[str, str] | None:
    """(content type, extension) of a PNG, JPEG, GIF or WebP by its first bytes; else None."""
    for magic, content_type, extension in SIGNATURES:
        if data.startswith(magic):
            return content_type, extension
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp", "webp"
    return None


@dataclass(frozen=True)
class Picture:
    """A checked picture, ready to store: its bytes, type and content hash."""

    data: bytes
    content_type: str
    extension: str
    sha256: str

    @property
    def name(self) -> str:
        return f"{self.sha256}.{self.extension}"


def checked(data: bytes, max_bytes: int) -> Picture | str:
    """The picture, or why it is refused, in words."""
    if len(data) > max_bytes:
        return f"is {len(data):,} bytes, over the limit of {max_bytes:,} for a picture."
    found = picture_type(data)
    if found is None:
        head = data[:256].lstrip().lower()
        if head.startswith((b"<svg", b"<?xml")) or b"<svg" in head:
            return "is SVG, which is not accepted (it can hold script): use PNG, JPEG, GIF or WebP."
        return "is not a PNG, JPEG, GIF or WebP picture (by its first bytes)."
    return Picture(data, found[0], found[1], hashlib.sha256(data).hexdigest())


def from_data_url(src: str) -> bytes | str:
    """The bytes of a base64 data URL, or why not, in words."""
    match = DATA_URL.match(src)
    if match is None:
        return "is not a data URL."
    if ";base64" not in (match.group("params") or "").lower():
        return "is a data URL that is not base64 (only base64 pictures are read)."
    try:
        return base64.b64decode(unquote(src[match.end() :]), validate=False)
    except (binascii.Error, ValueError):
        return "is a data URL whose base64 cannot be read."


def is_external(src: str) -> bool:
    return bool(re.match(r"^[a-z][a-z0-9+.-]*:", src, re.I)) and not src.lower().startswith(
        ("data:", REFERENCE)
    )


def beside(src: str, roots: tuple[Path, ...]) -> Path | None:
    """The file a relative `src` names inside one of `roots` (no escape by `..` or a link)."""
    name = unquote(src.split("#", 1)[0].split("?", 1)[0])
    if not name or name.startswith("/"):
        return None
    for root in roots:
        target = (root / name).resolve()
        if target.is_relative_to(root.resolve()) and target.is_file():
            return target
    return None


def from_shipped(value: object) -> bytes | str:
    """The bytes of a picture a record ships by name (OPC's `images`: base64 or a data URL)."""
    if not isinstance(value, str) or not value.strip():
        return "is empty."
    if value.lower().startswith("data:"):
        return from_data_url(value)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return "is not base64."


def resolve(
    text: str,
    *,
    roots: tuple[Path, ...],
    max_bytes: int,
    refuse: Callable[[str], None],
    named: dict[str, object] | None = None,
    edits: list[tuple[int, int, int]] | None = None,
) -> tuple[str, dict[str, Picture]]:
    """`text` with each picture it ships (a data URL, one the record carries by name in
    `named`, a file beside it) rewritten to `picture:<sha256>`, and those pictures by hash;
    `refuse(words)` is told of each one refused (the reference is then left as written).
    External addresses are left alone. Each rewrite is appended to `edits` as (start, end,
    new length), for offsets into the text (error spans) to follow it."""
    if "![" not in text:
        return text, {}
    found: dict[str, Picture] = {}
    named = named or {}

    def swap(match: re.Match) -> str:
        src = match.group("src")
        if src.startswith(REFERENCE) or is_external(src):
            return match.group(0)
        shipped = named.get(src, named.get(unquote(src), named.get(src.rsplit("/", 1)[-1])))
        if shipped is not None:
            data = from_shipped(shipped)
            label = repr(src)
        elif src.lower().startswith("data:"):
            data = from_data_url(src)
            label = "a data URL"
        else:
            path = beside(src, roots)
            if path is None:
                refuse(f"the picture {src!r} is not a file beside the source: left as written.")
                return match.group(0)
            label = repr(src)
            if path.stat().st_size > max_bytes:
                refuse(
                    f"the picture {label} is {path.stat().st_size:,} bytes, over the limit of "
                    f"{max_bytes:,} for a picture."
                )
                return match.group(0)
            data = path.read_bytes()
        if isinstance(data, str):
            refuse(f"the picture {label} {data}")
            return match.group(0)
        picture = checked(data, max_bytes)
        if isinstance(picture, str):
            refuse(f"the picture {label} {picture}")
            return match.group(0)
        found[picture.sha256] = picture
        title = match.group("title") or ""
        written = f"![{match.group('alt')}]({REFERENCE}{picture.sha256}{title})"
        if edits is not None:
            edits.append((match.start(), match.end(), len(written)))
        return written

    return IMAGE.sub(swap, text), found


def stored_in(text: str) -> list[str]:
    """The hashes of the stored pictures `text` refers to, in order, once each."""
    return list(dict.fromkeys(STORED.findall(text)))


def shifted(offset: int, edits: list[tuple[int, int, int]]) -> int:
    """Where `offset` of the text as written lies after the rewrites `edits` (an offset inside a
    rewritten reference goes to its start)."""
    moved = offset
    for start, end, length in edits:
        if end <= offset:
            moved += length - (end - start)
        elif start < offset:
            return moved - (offset - start)
    return moved
