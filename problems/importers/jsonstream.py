"""Whole-JSON files read one element at a time: DeepSeekMath-V2 inputs and OPC problem files.

Bytes are read a chunk at a time through an incremental UTF-8 decoder into a text buffer, and
`json.JSONDecoder.raw_decode` parses one element of the top-level list from it. The buffer grows
only while the element at its head is incomplete, and what has been parsed is dropped at the next
read, so memory is bounded by the largest element (about twice it) plus a chunk, not by the file.

Bytes that are not UTF-8 are decoded as lone surrogates and a NUL byte as the escape `\\u0000`,
so that the element holding them fails alone, naming its field (`base.storable_rows`), and the
elements around it are read.
"""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

from problems.importers.base import (
    Progress,
    SourceError,
    Where,
    check_start,
    no_constant,
    storable_rows,
)

CHUNK_SIZE = 64 * 1024
BLANKS = re.compile(r"[ \t\n\r]*")
# A parse error this close to the end of the buffer may be a token cut by the chunk boundary
# ("tru" of true, "\u00" of an escape): read on before calling it invalid.
CUT_TOKEN = 6


class JsonStream:
    """(where, element) for each element of the top-level JSON list read from `handle`, or once
    for the top-level object when `objects` is true; `where.line` is the line the element starts
    on. `shape` is the error when the top-level value is of another kind. After the first
    element, `top` is "[" or "{"; `largest` is the longest the buffer has been, in characters."""

    def __init__(
        self,
        handle: io.BufferedReader,
        name: str,
        *,
        shape: str,
        objects: bool = False,
        chunk_size: int = CHUNK_SIZE,
    ):
        self.handle = handle
        self.name = name
        self.shape = shape
        self.objects = objects
        self.chunk_size = chunk_size
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self.parser = json.JSONDecoder(parse_constant=no_constant)
        self.buffer = ""
        self.pos = 0  # the first character not yet parsed
        self.line = 1  # the line of buffer[pos]
        self.end_of_file = False
        self.top = ""
        self.largest = 0

    def __iter__(self) -> Iterator[tuple[Where, object]]:
        self.handle.read(check_start(Where(self.name), self.handle.peek(4096)[:4096]))
        first = self._next_char()
        if not first:
            raise SourceError(Where(self.name), "The file is empty: nothing to import.")
        if first == "[":
            self.top = first
            self._advance(self.pos + 1)
            yield from self._elements()
        elif first == "{" and self.objects:
            self.top = first
            yield self._value()
        else:
            raise SourceError(Where(self.name, self.line), self.shape)
        if self._next_char():
            raise self._invalid(self.pos, "Extra data")

    def _elements(self) -> Iterator[tuple[Where, object]]:
        if self._next_char() == "]":
            self._advance(self.pos + 1)
            return
        while True:
            if not self._next_char():
                raise self._invalid(self.pos, "the file ends inside the list")
            yield self._value()
            after = self._next_char()
            if after == "]":
                self._advance(self.pos + 1)
                return
            if after != ",":
                raise self._invalid(
                    self.pos,
                    "Expecting ',' delimiter" if after else "the file ends inside the list",
                )
            self._advance(self.pos + 1)

    def _value(self) -> tuple[Where, object]:
        """The value starting at buffer[pos], reading on while it is incomplete."""
        where = Where(self.name, self.line)
        while True:
            try:
                value, end = self.parser.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                cut = exc.msg.startswith("Unterminated string") or (
                    exc.pos >= len(self.buffer) - CUT_TOKEN
                )
                if self.end_of_file or not cut:
                    raise self._invalid(exc.pos, exc.msg) from exc
            except (ValueError, RecursionError) as exc:  # NaN, too many digits, too deep
                raise self._invalid(self.pos, str(exc)) from exc
            else:
                if end < len(self.buffer) or self.end_of_file:  # a number may go on
                    self._advance(end)
                    return where, value
            self._read(max(self.chunk_size, len(self.buffer) - self.pos))

    def _next_char(self) -> str:
        """The next non-blank character, left unparsed; "" at the end of the file."""
        while True:
            at = BLANKS.match(self.buffer, self.pos).end()
            self._advance(at)
            if at < len(self.buffer):
                return self.buffer[at]
            if self.end_of_file:
                return ""
            self._read(self.chunk_size)

    def _advance(self, to: int) -> None:
        self.line += self.buffer.count("\n", self.pos, to)
        self.pos = to

    def _read(self, size: int) -> None:
        """Drops the parsed text and appends up to `size` more bytes, decoded."""
        data = self.handle.read(size)
        self.end_of_file = not data
        text = self.decoder.decode(data, final=not data)
        if "\x00" in text:  # never valid in JSON text: read as the escape, named in its field
            text = text.replace("\x00", "\\u0000")
        self.buffer = self.buffer[self.pos :] + text
        self.pos = 0
        self.largest = max(self.largest, len(self.buffer))

    def _invalid(self, pos: int, message: str) -> SourceError:
        line = self.line + self.buffer.count("\n", self.pos, pos)
        return SourceError(Where(self.name, line), f"Not valid JSON: {message}.")


def json_array_rows(
    path: Path,
    progress: Progress,
    name: str,
    *,
    shape: str,
    objects: bool = False,
    storable: bool = True,
) -> Iterator[tuple[Where, object]]:
    """(where, element) for each element of the top-level list of a JSON file (see JsonStream);
    an element holding what the database cannot store comes as its errors (`storable_rows`),
    unless `storable` is false (a reader whose elements hold several records checks each)."""
    handle = progress.open(path)
    try:
        rows = JsonStream(handle, name, shape=shape, objects=objects)
        yield from storable_rows(rows) if storable else rows
    finally:
        handle.close()
