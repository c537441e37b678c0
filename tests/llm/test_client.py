"""The client against the fake OpenAI-compatible server: usage, retries on named transient
errors only, timeouts, bounded concurrency. Backoff waits are recorded, not slept."""

import pytest

from llm.client import LLMClient, LLMConfig, LLMProviderError, LLMTransientError, Usage
from tests.llm.fake_openai import slow, status, text, truncated

MESSAGES = [{"role": "user", "content": "Say hello"}]


def make_client(fake, **overrides):
    waits: list[float] = []
    settings = {
        "base_url": fake.base_url,
        "model": "fake-model",
        "api_key": "sk-test",
        "temperature": 0.2,
        "max_tokens": 512,
        "timeout": 5,
        "max_attempts": 3,
        "backoff_base": 0.5,
    }
    config = LLMConfig(**{**settings, **overrides})
    return LLMClient(config, sleep=waits.append), waits


def test_completion_returns_text_usage_and_sends_parameters(fake_llm):
    fake_llm.on("Say hello", text("Hello."))
    client, waits = make_client(fake_llm)
    completion = client.complete(MESSAGES)
    assert completion.text == "Hello."
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert completion.usage.completion_tokens > 0
    assert completion.attempts == 1 and completion.finish_reason == "stop"
    (entry,) = fake_llm.log
    assert entry["model"] == "fake-model"
    assert entry["params"]["temperature"] == 0.2 and entry["params"]["max_tokens"] == 512
    assert entry["authorization"] == "Bearer sk-test"
    assert waits == []


def test_rate_limit_then_success_is_retried_with_backoff_honouring_retry_after(fake_llm):
    fake_llm.on("Say hello", status(429, retry_after=3), status(429), text("Hello."))
    client, waits = make_client(fake_llm)
    completion = client.complete(MESSAGES)
    assert completion.text == "Hello." and completion.attempts == 3
    assert [e["status"] for e in fake_llm.log] == [429, 429, 200]
    assert len(waits) == 2 and waits[0] >= 3  # Retry-After wins over a shorter backoff


def test_server_errors_exhaust_the_attempts_and_keep_the_raw_body(fake_llm):
    fake_llm.on("Say hello", status(500, message="upstream exploded"))
    client, waits = make_client(fake_llm)
    with pytest.raises(LLMTransientError) as caught:
        client.complete(MESSAGES)
    assert caught.value.attempts == 3 and caught.value.status == 500
    assert "upstream exploded" in caught.value.raw
    assert "HTTP 500" in str(caught.value)
    assert len(fake_llm.log) == 3 and len(waits) == 2
    assert waits[1] > waits[0] * 0.5  # grows (with jitter)


def test_client_errors_are_not_retried(fake_llm):
    fake_llm.on("Say hello", status(400, message="bad model name"))
    client, _ = make_client(fake_llm)
    with pytest.raises(LLMProviderError) as caught:
        client.complete(MESSAGES)
    assert caught.value.status == 400 and not caught.value.transient
    assert len(fake_llm.log) == 1


def test_slow_reply_times_out_and_counts_as_transient(fake_llm):
    fake_llm.on("Say hello", slow(10))
    client, _ = make_client(fake_llm, timeout=0.3)
    with pytest.raises(LLMTransientError) as caught:
        client.complete(MESSAGES)
    assert "timeout" in str(caught.value)
    assert caught.value.attempts == 3 and len(fake_llm.log) == 3


def test_connection_refused_is_transient():
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", max_attempts=2, timeout=2)
    waits: list[float] = []
    with pytest.raises(LLMTransientError) as caught:
        LLMClient(config, sleep=waits.append).complete(MESSAGES)
    assert "could not reach" in str(caught.value) and len(waits) == 1


def test_truncated_reply_is_flagged(fake_llm):
    fake_llm.on("Say hello", truncated("A long answer that stops in the middle"))
    client, _ = make_client(fake_llm)
    completion = client.complete(MESSAGES)
    assert completion.truncated and completion.text == "A long answer that "


def test_complete_many_keeps_order_and_reports_failures_in_place(fake_llm):
    fake_llm.on("one", text("1"))
    fake_llm.on("two", status(401, message="no key"))
    fake_llm.on("three", text("3"))
    client, _ = make_client(fake_llm, concurrency=2)
    results = client.complete_many(
        [[{"role": "user", "content": word}] for word in ("one", "two", "three")]
    )
    assert results[0].text == "1" and results[2].text == "3"
    assert isinstance(results[1], LLMProviderError)


def test_usage_adds_and_round_trips():
    total = Usage(1, 2, 3) + Usage(10, 20, 30)
    assert total == Usage(11, 22, 33)
    assert Usage.from_dict(total.to_dict()) == total
    assert Usage.from_dict(None) == Usage()


def test_parameters_never_include_the_key():
    config = LLMConfig(base_url="http://x/v1", model="m", api_key="secret", temperature=0.5)
    assert "secret" not in str(config.parameters())
    assert config.parameters()["temperature"] == 0.5


def test_bodies_that_are_not_chat_completions_are_provider_errors_with_the_raw_body(fake_llm):
    from tests.llm.fake_openai import broken

    fake_llm.on("cut", broken('{"id": "chatcmpl-1", "choices": [{"mess'))
    fake_llm.on("shape", broken('{"id": "x", "choices": "nope"}'))
    fake_llm.on("proxy", broken("<html><body>502 Bad Gateway</body></html>", code=502))
    client, waits = make_client(fake_llm)
    with pytest.raises(LLMProviderError, match="not valid JSON") as cut:
        client.complete([{"role": "user", "content": "cut"}])
    assert cut.value.raw.startswith('{"id": "chatcmpl-1"')
    with pytest.raises(LLMProviderError, match="not a chat completion") as shape:
        client.complete([{"role": "user", "content": "shape"}])
    assert "nope" in shape.value.raw
    with pytest.raises(LLMTransientError, match="HTTP 502") as proxy:
        client.complete([{"role": "user", "content": "proxy"}])
    assert "Bad Gateway" in proxy.value.raw and len(waits) == 2
