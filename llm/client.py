"""A chat-completion client for any OpenAI-compatible endpoint (hosted, or local vLLM/SGLang).

`LLMConfig` holds what a call needs (base URL, key, model, temperature, max tokens, timeout,
concurrency, retry budget); `LLMClient.complete(messages)` returns a `Completion` (text, token
usage, finish reason, number of attempts). The SDK's own retries are off (max_retries=0): ours
are the ones counted. Only named transient errors are retried, with exponential backoff
(rate limits 429, server errors 5xx, timeouts, connection errors), honouring Retry-After;
anything else (400, 401, 404...) fails at once. `complete_many` runs several calls with at
most `config.concurrency` in flight.

The `openai` SDK is imported only where a call is made: importing it costs about 40 MB of memory,
and every process that loads the apps (web, workers, exports, commands) imports this module.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from llm.whole import not_whole

Messages = Sequence[dict[str, str]]


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 600.0
    concurrency: int = 4
    max_attempts: int = 4
    backoff_base: float = 2.0
    backoff_max: float = 60.0
    extra: dict = field(default_factory=dict)

    def parameters(self) -> dict:
        """What shapes the output (kept as provenance; never the key)."""
        return {
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            **({"extra": self.extra} if self.extra else {}),
        }


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
        )

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> Usage:
        data = data or {}
        return cls(
            int(data.get("prompt_tokens") or 0),
            int(data.get("completion_tokens") or 0),
            int(data.get("total_tokens") or 0),
        )


@dataclass
class Completion:
    text: str
    usage: Usage
    model: str
    finish_reason: str | None
    attempts: int

    @property
    def truncated(self) -> bool:
        """The reply stopped at max_tokens: its end is missing."""
        return self.finish_reason == "length"

    @property
    def incomplete(self) -> str:
        """Why the reply is not a whole answer, in words ("" when it is): it stopped at the
        token limit, or it is not whole text (`llm.whole`: over the size limit, or its reasoning
        block never closed). Such a reply is a failed sample whatever it holds: never a score,
        a label or a scheme."""
        if self.truncated:
            return 'the reply was cut off at the token limit (finish_reason "length")'
        return not_whole(self.text)


class LLMError(Exception):
    """A call that did not give a usable reply. `raw` is what the provider sent back, if anything;
    `attempts` how many requests were made."""

    transient = False

    def __init__(
        self, message: str, *, raw: str = "", attempts: int = 1, status: int | None = None
    ):
        super().__init__(message)
        self.raw = raw
        self.attempts = attempts
        self.status = status


class LLMTransientError(LLMError):
    """Rate limit, server error, timeout or lost connection, still failing after every attempt:
    worth trying again later."""

    transient = True


class LLMProviderError(LLMError):
    """The provider refused the request (bad request, authentication, unknown model...)."""


def _is_transient(exc: Exception) -> bool:
    import openai

    transient = (
        openai.RateLimitError,
        openai.InternalServerError,
        openai.APITimeoutError,
        openai.APIConnectionError,
    )
    if isinstance(exc, transient):
        return True
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


def _describe(exc: Exception) -> tuple[str, str, int | None]:
    """(message in words, raw body, HTTP status) of an SDK error."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "the model did not answer within the timeout", "", None
    if isinstance(exc, openai.APIConnectionError):
        return f"could not reach the model endpoint ({exc})", "", None
    if isinstance(exc, openai.APIStatusError):
        raw = exc.response.text if exc.response is not None else ""
        kind = "rate limited" if exc.status_code == 429 else "error"
        return f"the endpoint replied HTTP {exc.status_code} ({kind})", raw, exc.status_code
    return str(exc), "", None


def _dump(response) -> str:
    try:
        return response.model_dump_json(warnings=False)
    except (AttributeError, TypeError, ValueError):
        return repr(response)


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    if response is None:
        return None
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class LLMClient:
    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep):
        import openai

        self.config = config
        self._sleep = sleep
        self._sdk = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "not-needed",
            timeout=config.timeout,
            max_retries=0,
        )

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 1)."""
        delay = self.config.backoff_base * 2 ** (attempt - 1)
        delay = min(self.config.backoff_max, delay * (0.5 + random.random() / 2))
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.config.backoff_max))
        return delay

    def complete(self, messages: Messages) -> Completion:
        import openai

        config = self.config
        params: dict = {"model": config.model, "messages": list(messages)}
        if config.temperature is not None:
            params["temperature"] = config.temperature
        if config.max_tokens:
            params["max_tokens"] = config.max_tokens
        if config.extra:
            params["extra_body"] = config.extra
        attempts = max(1, config.max_attempts)
        for attempt in range(1, attempts + 1):
            try:
                response = self._sdk.chat.completions.create(**params)
            except json.JSONDecodeError as exc:
                raise LLMProviderError(
                    "the endpoint's reply is not valid JSON", raw=exc.doc, attempts=attempt
                ) from exc
            except openai.APIError as exc:
                message, raw, status = _describe(exc)
                if not _is_transient(exc):
                    raise LLMProviderError(
                        message, raw=raw, attempts=attempt, status=status
                    ) from exc
                if attempt == attempts:
                    raise LLMTransientError(
                        f"{message}, {attempt} attempt(s)", raw=raw, attempts=attempt, status=status
                    ) from exc
                self._sleep(self.backoff(attempt, _retry_after(exc)))
                continue
            return self._completion(response, attempt)
        raise AssertionError("unreachable")

    def _completion(self, response, attempt: int) -> Completion:
        try:
            choice = response.choices[0]
            text = (choice.message.content or "") if choice.message else ""
            finish_reason = choice.finish_reason
        except (AttributeError, IndexError, KeyError, TypeError) as exc:
            raise LLMProviderError(
                "the endpoint's reply is not a chat completion (no choices with a message)",
                raw=_dump(response),
                attempts=attempt,
            ) from exc
        usage = response.usage
        return Completion(
            text=text,
            usage=Usage(
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                total_tokens=getattr(usage, "total_tokens", 0) or 0,
            ),
            model=response.model or self.config.model,
            finish_reason=finish_reason,
            attempts=attempt,
        )

    def complete_many(self, batch: Sequence[Messages]) -> list[Completion | LLMError]:
        """Several calls, at most `config.concurrency` at once; results in the input's order,
        an `LLMError` in place of a call that failed."""

        def one(messages: Messages) -> Completion | LLMError:
            try:
                return self.complete(messages)
            except LLMError as exc:
                return exc

        workers = max(1, min(self.config.concurrency, len(batch)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, batch))
