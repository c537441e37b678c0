"""What a refused call raises: ProofmarkError, with the HTTP status and the API's error body."""

from __future__ import annotations

from typing import Any


class ProofmarkError(Exception):
    """A call the server refused (or could not be reached: status 0). `status` is the HTTP
    status, `body` the API's error body as sent: `{"detail": "..."}`, or for bad input each bad
    field with its messages (`{"file_type": ["..."]}`)."""

    def __init__(self, status: int, body: Any, *, method: str = "", url: str = "") -> None:
        self.status = status
        self.body = body
        self.method = method
        self.url = url
        super().__init__(self._message())

    @property
    def detail(self) -> str:
        """The body's `detail`, or its fields and messages in one line."""
        if isinstance(self.body, dict):
            if isinstance(self.body.get("detail"), str):
                return self.body["detail"]
            return "; ".join(f"{key}: {value}" for key, value in self.body.items())
        return str(self.body)

    def _message(self) -> str:
        where = f"{self.method} {self.url}: " if self.url else ""
        return f"{where}{self.status} {self.detail}" if self.status else f"{where}{self.detail}"

    @classmethod
    def from_response(cls, response) -> ProofmarkError:
        try:
            body: Any = response.json()
        except ValueError:
            body = {"detail": response.text[:2000]}
        return cls(
            response.status_code,
            body,
            method=response.request.method if response.request is not None else "",
            url=response.url,
        )


class JobFailed(ProofmarkError):
    """A job (an import, an export) that ended failed; `job` is it as last read."""

    def __init__(self, what: str, job: Any) -> None:
        self.job = job
        super().__init__(
            0, {"detail": f"{what} failed: {getattr(job, 'error', '') or 'no reason given'}"}
        )


class JobTimeout(ProofmarkError):
    """A job still running when the wait gave up; `job` is it as last read."""

    def __init__(self, what: str, job: Any, timeout: float) -> None:
        self.job = job
        super().__init__(0, {"detail": f"{what} still {job.status} after {timeout:g} s"})
