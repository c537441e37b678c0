"""Structured logs: one JSON object a line, with the request id or the task's job id and attempt.

`log_context` holds what every line written while serving a request (or running a task) carries;
`ContextFilter` copies it onto each record and `JsonFormatter` writes the record as JSON. The
request line itself is written by `core.middleware.RequestLogMiddleware`, the task lines by the
Celery signals in `config.celery`.
"""

import contextvars
import logging
import time

import orjson

log_context: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "proofmark_log_context", default=None
)

# A LogRecord's own attributes: everything else on a record came from `extra=` or the context.
_RECORD_FIELDS = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class ContextFilter(logging.Filter):
    """Adds the current request's or task's context (request_id, job_id, attempt...) to a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in (log_context.get() or {}).items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _RECORD_FIELDS and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(line, default=str).decode()
