"""Upload handlers: Django's own, reading the body 1 MiB at a time instead of 64 KiB.

gunicorn reads a request body up to 1 MiB a `recv()` and keeps what the reader did not ask for
in a buffer it copies again on each read, so 64 KiB reads copied every MiB sixteen times: a
137 MB corpus upload cost about 0.9 CPU-seconds of the web process, most of it in those copies
(py-spy, benchmarks/RESULTS.md "Profile steps: import and export"). Memory per upload stays one
chunk; files above FILE_UPLOAD_MAX_MEMORY_SIZE still go to a temporary file."""

from django.core.files.uploadhandler import MemoryFileUploadHandler, TemporaryFileUploadHandler

CHUNK_SIZE = 1024 * 1024


class MemoryUploadHandler(MemoryFileUploadHandler):
    chunk_size = CHUNK_SIZE


class TemporaryUploadHandler(TemporaryFileUploadHandler):
    chunk_size = CHUNK_SIZE
