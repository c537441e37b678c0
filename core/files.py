"""Files shared between processes go through Django's storage API (`STORAGES["default"]`): a
folder on a shared volume (FileSystemStorage at MEDIA_ROOT) or an S3-compatible bucket. A web
process saves an upload and a worker reads it; a worker writes an export and any web process
serves it. These helpers are the only places that move such a file to or from a local path.

Upload handlers (FILE_UPLOAD_HANDLERS) are Django's own, reading the body 1 MiB at a time
instead of 64 KiB. gunicorn reads a request body up to 1 MiB a `recv()` and keeps what the
reader did not ask for in a buffer it copies again on each read, so 64 KiB reads copied every
MiB sixteen times: a 137 MB corpus upload cost about 0.9 CPU-seconds of the web process, most
of it in those copies (py-spy, benchmarks/RESULTS.md "Profile steps: import and export").
Memory per upload stays one chunk; files above FILE_UPLOAD_MAX_MEMORY_SIZE still go to a
temporary file.

The site's upload limit (PROOFMARK_MAX_UPLOAD_BYTES, plus a MiB for the form around the file) is
kept by the first handler, before a byte is read: a body that declares more is refused at once
(413), and a body that sends more than it declared, or streams with no length, is stopped at the
limit. A disk that fills while an upload is written is 507 with the reason, and the partial file
is removed at once."""

import contextlib
import errno
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles.storage import StaticFilesStorage
from django.core.exceptions import RequestDataTooBig
from django.core.files import File
from django.core.files.storage import Storage, default_storage
from django.core.files.uploadhandler import (
    FileUploadHandler,
    MemoryFileUploadHandler,
    TemporaryFileUploadHandler,
)


class StaticStorage(StaticFilesStorage):
    """Django's static files storage (`STORAGES["staticfiles"]`), each name's URL computed once:
    every page asks for the same dozen on every load."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._urls: dict[str, str] = {}

    def url(self, name):
        found = self._urls.get(name)
        if found is None:
            found = self._urls[name] = super().url(name)
        return found


@contextmanager
def stored_file_local(name: str, *, storage: Storage = default_storage) -> Iterator[Path]:
    """A local path holding the stored file `name` while the block runs: the file itself when
    the storage is a folder (a shared volume), else a temporary copy (same file name, so a
    format told by its extension is still told)."""
    try:
        path = storage.path(name)
    except NotImplementedError:
        path = None
    if path is not None:
        yield Path(path)
        return
    with tempfile.TemporaryDirectory(prefix="proofmark-") as folder:
        local = Path(folder) / Path(name).name
        with storage.open(name, "rb") as source, local.open("wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
        yield local


class _LocalFile(File):
    """A local file a folder storage may move into place (FileSystemStorage renames a file that
    names its `temporary_file_path`, as it does an upload's) instead of copying it; a bucket
    reads it."""

    def __init__(self, handle, path: Path):
        super().__init__(handle, name=path.name)
        self.path = path

    def temporary_file_path(self) -> str:
        return str(self.path)


def stored_file_put(local: Path, name: str, *, storage: Storage = default_storage) -> None:
    """Stores the local file under exactly `name`, replacing what was there. The local file is
    consumed: a folder storage on the same volume takes it by a rename (no copy of a large
    export), any other storage by reading it."""
    if storage.exists(name):
        storage.delete(name)
    with local.open("rb") as handle:
        saved = storage.save(name, _LocalFile(handle, local))
    if saved != name:
        raise RuntimeError(f"the storage kept {name!r} as {saved!r}")


def stored_folder_delete(folder: str, *, storage: Storage = default_storage) -> None:
    """Deletes the stored `folder` with everything in it (absent: nothing happens)."""
    try:
        folders, files = storage.listdir(folder)
    except FileNotFoundError:
        return
    for name in files:
        storage.delete(f"{folder}/{name}")
    for name in folders:
        stored_folder_delete(f"{folder}/{name}", storage=storage)
    with contextlib.suppress(NotImplementedError, OSError):
        Path(storage.path(folder)).rmdir()  # a folder storage keeps empty folders otherwise


# --- Upload handlers ------------------------------------------------------------------------

CHUNK_SIZE = 1024 * 1024
FORM_SLACK = 1024 * 1024  # the multipart form around the file: boundaries, other fields


class UploadTooLarge(RequestDataTooBig):
    """An upload over the site's limit (answered 413: core.errors)."""


class UploadDiskFull(OSError):
    """The disk filled while an upload was written (answered 507: core.errors)."""


def upload_limit() -> int:
    return settings.PROOFMARK_MAX_UPLOAD_BYTES + FORM_SLACK


class UploadLimitHandler(FileUploadHandler):
    """First of the handlers: refuses a body that declares more than the limit before reading
    it, and stops one that sends more (or streams without a length) at the limit."""

    chunk_size = CHUNK_SIZE

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        self.received = 0
        if content_length and content_length > upload_limit():
            raise UploadTooLarge(
                f"The upload is {content_length:,} bytes; the limit is {upload_limit():,}."
            )

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > upload_limit():
            raise UploadTooLarge(f"The upload went past the limit of {upload_limit():,} bytes.")
        return raw_data

    def file_complete(self, file_size):
        return None


class MemoryUploadHandler(MemoryFileUploadHandler):
    chunk_size = CHUNK_SIZE


class TemporaryUploadHandler(TemporaryFileUploadHandler):
    chunk_size = CHUNK_SIZE

    def receive_data_chunk(self, raw_data, start):
        try:
            return super().receive_data_chunk(raw_data, start)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            with contextlib.suppress(OSError):
                self.file.close()  # a temporary upload file: closing removes it
            raise UploadDiskFull(
                exc.errno, "The server's disk is full: the upload was not kept; try again later."
            ) from exc
