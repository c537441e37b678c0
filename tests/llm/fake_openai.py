"""A fake OpenAI-compatible server for tests: `POST /v1/chat/completions` on 127.0.0.1
(pytest-httpserver, threaded), answering scripted replies chosen by the prompt's content.

    fake_llm.on("Write the marking scheme", text(SCHEME))      # a rule: needle(s) -> replies
    fake_llm.on("apart into its main steps", status(429), text(ANALYSIS))

A rule matches when every needle occurs in the request's messages; the first matching rule (in
the order added) answers with its next reply, and keeps repeating its last one. Replies act like
real providers: text (with usage and a finish reason), HTTP errors with a JSON error body and
Retry-After, slow answers (beyond the client's timeout), truncated output (finish_reason
"length"), reasoning in `<think>` blocks, closed or never closed. Every request is logged (`fake_llm.log`), including the
ones answered with an error. The server is a real socket, so a Celery worker in another process
reaches it through the endpoint's base URL.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    finish_reason: str = "stop"
    delay: float = 0.0
    headers: dict = field(default_factory=dict)
    body: str | None = None


def text(content: str, *, think: str = "", finish_reason: str = "stop") -> Reply:
    """A normal answer; `think` puts reasoning in a `<think>` block before it."""
    return Reply(
        f"<think>\n{think}\n</think>\n\n{content}" if think else content, 200, finish_reason
    )


def truncated(content: str, keep: float = 0.5) -> Reply:
    """The answer cut off at max_tokens: the first part of `content`, finish_reason "length"."""
    return Reply(content[: max(1, int(len(content) * keep))], 200, "length")


def unclosed_think(reasoning: str) -> Reply:
    """A reply that stopped while reasoning: a `<think>` block never closed (finish_reason
    "stop", as some servers report when the reasoning parser gives up)."""
    return Reply(f"<think>\n{reasoning}", 200, "stop")


def status(code: int, *, retry_after: float | None = None, message: str = "") -> Reply:
    """An HTTP error as providers send it (JSON error body, Retry-After on 429 when given)."""
    kinds = {
        429: "rate_limit_exceeded",
        500: "server_error",
        503: "overloaded",
        400: "invalid_request_error",
    }
    body = json.dumps(
        {
            "error": {
                "message": message or f"Fake provider error {code}",
                "type": kinds.get(code, "api_error"),
                "code": code,
            }
        }
    )
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return Reply(status=code, headers=headers, body=body)


def broken(body: str, code: int = 200) -> Reply:
    """A reply whose HTTP body is not a chat completion (a proxy's HTML page, cut-off JSON)."""
    return Reply(status=code, body=body)


def slow(seconds: float, content: str = "Too late.") -> Reply:
    """An answer that comes after `seconds` (longer than the client's timeout)."""
    return Reply(content, 200, "stop", delay=seconds)


@dataclass
class Rule:
    needles: tuple[str, ...]
    replies: list[Reply]
    served: int = 0


class FakeOpenAI:
    def __init__(self, server: HTTPServer, model: str = "fake-model"):
        self.server = server
        self.model = model
        self.rules: list[Rule] = []
        self.log: list[dict] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(
            self._handle
        )
        server.expect_request("/v1/models", method="GET").respond_with_json(
            {"object": "list", "data": [{"id": model, "object": "model"}]}
        )

    @property
    def base_url(self) -> str:
        return self.server.url_for("/v1")

    def on(self, needles: str | tuple[str, ...], *replies: Reply) -> FakeOpenAI:
        needles = (needles,) if isinstance(needles, str) else tuple(needles)
        self.rules.append(Rule(needles, list(replies)))
        return self

    def reset(self) -> None:
        with self._lock:
            self.rules.clear()
            self.log.clear()

    def prompts(self) -> list[str]:
        """The user message of every request, in order."""
        return [entry["user"] for entry in self.log]

    def count(self, needle: str) -> int:
        return sum(needle in entry["content"] for entry in self.log)

    def release(self) -> None:
        """Ends the wait of slow replies still in progress (at teardown)."""
        self._release.set()

    def _handle(self, request: Request) -> Response:
        payload = request.get_json(force=True, silent=True) or {}
        messages = payload.get("messages") or []
        content = "\n\n".join(str(m.get("content", "")) for m in messages)
        user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
        with self._lock:
            rule = next((r for r in self.rules if all(n in content for n in r.needles)), None)
            reply = None
            if rule is not None:
                reply = rule.replies[min(rule.served, len(rule.replies) - 1)]
                rule.served += 1
            self.log.append(
                {
                    "model": payload.get("model"),
                    "content": content,
                    "user": user,
                    "params": {k: v for k, v in payload.items() if k != "messages"},
                    "authorization": request.headers.get("Authorization", ""),
                    "status": reply.status if reply else 404,
                    "rule": rule.needles if rule else None,
                }
            )
        if reply is None:
            return Response(
                json.dumps({"error": {"message": "no scripted reply for this prompt"}}),
                status=404,
                content_type="application/json",
            )
        if reply.delay:
            self._release.wait(reply.delay)
        if reply.status != 200 or reply.body is not None:
            return Response(
                reply.body or "",
                status=reply.status,
                headers=reply.headers,
                content_type="application/json",
            )
        prompt_tokens = max(1, len(content) // 4)
        completion_tokens = max(1, len(reply.text) // 4)
        body = {
            "id": f"chatcmpl-fake-{len(self.log)}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": payload.get("model") or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return Response(json.dumps(body), status=200, content_type="application/json")
