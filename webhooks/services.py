"""Every write of the webhooks app: hooks (create, change, delete), the deliveries an event makes
(one per active hook told of it, queued on commit), a delivery's tries and its replay.

Nothing here sends HTTP inside a request: an event only records rows and queues the
`webhooks.delivery_send` task once the transaction commits; the worker sends, on the `webhooks`
queue, with a short timeout (WEBHOOK_TIMEOUT_SECONDS) and retries with backoff.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import wraps
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.roles import Role, user_roles
from core.visibility import blind_to_proof
from jobs.models import JobStatus
from jobs.services import job_send_on_commit
from webhooks import selectors
from webhooks.models import Delivery, DeliveryAttempt, Event, Webhook

logger = logging.getLogger(__name__)

KIND = "webhook_delivery"
EXCERPT_CHARS = 500
USER_AGENT = "Proofmark-Webhooks/1"


class WebhookError(ValueError):
    """A hook the rules refuse, naming the field (`url`, `events`, ...) it is about."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


# --- Hooks -------------------------------------------------------------------------------------


def secret_new() -> str:
    """A hook's signing key as Standard Webhooks writes one: `whsec_` and 24 random bytes in
    base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def url_clean(url: str) -> str:
    url = (url or "").strip()
    if not url:
        raise WebhookError("url", "give the URL deliveries are sent to")
    if len(url) > 2000:
        raise WebhookError("url", "at most 2000 characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise WebhookError("url", f"{url!r} is not an http:// or https:// URL")
    if not parts.hostname:
        raise WebhookError("url", f"{url!r} names no host")
    try:
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        raise WebhookError("url", f"{url!r} has a port that is not a number") from None
    return url


def events_clean(events: Iterable[str]) -> list[str]:
    chosen = [str(event).strip() for event in events or ()]
    if not chosen:
        raise WebhookError("events", "choose at least one event")
    unknown = sorted(set(chosen) - set(Event.values))
    if unknown:
        raise WebhookError(
            "events",
            f"unknown event(s) {', '.join(map(repr, unknown))}; known: {', '.join(Event.values)}",
        )
    return [event for event in Event.values if event in chosen]  # one order, no repeats


@transaction.atomic
def webhook_create(
    *,
    url: str,
    events: Iterable[str],
    active: bool = True,
    description: str = "",
    owner: AbstractBaseUser | None,
) -> Webhook:
    """A new hook with a fresh secret (shown to admins on its page and in the API's answer),
    owned by the admin who adds it (`owner_withholds`)."""
    return Webhook.objects.create(
        url=url_clean(url),
        events=events_clean(events),
        active=active,
        description=description.strip()[:200],
        secret=secret_new(),
        owner=owner,
    )


@transaction.atomic
def webhook_update(
    *,
    webhook: Webhook,
    url: str | None = None,
    events: Iterable[str] | None = None,
    active: bool | None = None,
    by: AbstractBaseUser | None,
) -> Webhook:
    """Changes what is given; a deactivated hook is sent nothing (its waiting deliveries fail
    with the reason when their turn comes). Who changes where deliveries go or of what (the URL,
    the events) becomes the hook's owner: what it tells of proofs is what `by` may see."""
    fields = []
    if url is not None:
        webhook.url = url_clean(url)
        fields.append("url")
    if events is not None:
        webhook.events = events_clean(events)
        fields.append("events")
    if active is not None:
        webhook.active = bool(active)
        fields.append("active")
    if {"url", "events"} & set(fields) and by is not None:
        webhook.owner = by
        fields.append("owner")
    if fields:
        webhook.save(update_fields=fields)
    return webhook


@transaction.atomic
def webhook_delete(*, webhook: Webhook) -> None:
    """Deletes the hook and its deliveries (a message already queued finds no row and stops)."""
    webhook.delete()


# --- Events ------------------------------------------------------------------------------------


def _never_raises(service: Callable) -> Callable:
    """A hook's bookkeeping never changes the outcome of what it tells of: the event's own
    transaction has committed when these run, and a failure here (the database, the broker) is
    logged, never raised into the grading, export or import that sent the signal."""

    @wraps(service)
    def wrapped(**kwargs):
        try:
            return service(**kwargs)
        except Exception:
            logger.exception("webhooks: %s(%s) failed", service.__name__, kwargs)
            return []

    return wrapped


def _body(event: str, data: dict) -> str:
    payload = {"type": event, "timestamp": timezone.now().isoformat(), "data": data}
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=str)


def deliveries_record(
    *, event: str, data: dict | Callable[[], dict | None], hooks: list[Webhook] | None = None
) -> list[Delivery]:
    """One delivery per active hook told of `event`, its task queued on commit. `data` may be a
    function, read only when some hook listens: an event nobody listens to costs one query and
    no transaction (the rows are one INSERT, atomic by itself; most events come once their own
    transaction has committed)."""
    hooks = selectors.hooks_for(event) if hooks is None else hooks
    if not hooks:
        return []
    if callable(data):
        data = data()
        if data is None:
            return []
    body = _body(event, data)
    proof_id = data.get("proof")  # an event about a proof keeps its blindness (`owner_withholds`)
    rows = Delivery.objects.bulk_create(
        Delivery(
            webhook=hook,
            event=event,
            proof_id=proof_id,
            message_id=f"msg_{uuid.uuid4().hex}",
            body=body,
        )
        for hook in hooks
    )
    job_send_on_commit(KIND, [row.pk for row in rows])
    return rows


@_never_raises
def event_item_labelled(*, item_id: int) -> list[Delivery]:
    return deliveries_record(
        event=Event.ITEM_LABELLED, data=lambda: selectors.item_labelled_data(item_id=item_id)
    )


@_never_raises
def event_case(*, case_id: int, opened: bool) -> list[Delivery]:
    return deliveries_record(
        event=Event.CASE_OPENED if opened else Event.CASE_SETTLED,
        data=lambda: selectors.case_data(case_id=case_id),
    )


@_never_raises
def event_export_finished(*, job_id: int, status: str) -> list[Delivery]:
    succeeded = status == JobStatus.SUCCEEDED
    return deliveries_record(
        event=Event.EXPORT_SUCCEEDED if succeeded else Event.EXPORT_FAILED,
        data=lambda: selectors.export_data(job_id=job_id),
    )


@_never_raises
def event_import_finished(
    *,
    name: str,
    committed: bool,
    records: int,
    errors: int,
    warnings: int,
    counts: dict,
    outcome: str,
) -> list[Delivery]:
    data = {
        "name": name,
        "committed": committed,
        "records": records,
        "errors": errors,
        "warnings": warnings,
        "counts": counts,
        "outcome": outcome,
    }
    return deliveries_record(event=Event.IMPORT_FINISHED, data=data)


@_never_raises
def event_job_failed(*, kind: str, job_id: int, reason: str) -> list[Delivery]:
    """Any job kind's failure, but a delivery's own: a failed delivery telling of itself would
    make another delivery, which could fail in turn."""
    if kind == KIND:
        return []
    return deliveries_record(
        event=Event.JOB_FAILED, data={"kind": kind, "job": job_id, "reason": reason[:2000]}
    )


# --- Sending -----------------------------------------------------------------------------------


def signature(secret: str, message_id: str, timestamp: int | str, body: str) -> str:
    """Standard Webhooks' signature: `v1,` and the base64 HMAC-SHA256 of
    "<message id>.<timestamp>.<body>", keyed by the secret's bytes (the base64 after `whsec_`)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.{body}".encode()
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def signed_headers(*, secret: str, message_id: str, body: str, timestamp: int) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, message_id, timestamp, body),
    }


@dataclass(frozen=True)
class Outcome:
    """What one try came to: delivered, to retry (after `number` tries), or failed for good."""

    state: str  # "delivered", "retry", "failed", "skipped"
    number: int = 0


def _post(url: str, body: str, headers: dict[str, str]) -> tuple[int | None, str, str]:
    """POSTs once: (status code, the answer's first characters, error). Redirects are not
    followed (a 3xx is the receiver's answer). A connection refused, a timeout or a broken
    answer is the error, with no status code."""
    import requests

    timeout = settings.WEBHOOK_TIMEOUT_SECONDS
    try:
        with requests.post(
            url,
            data=body.encode(),
            headers=headers,
            timeout=(min(timeout, 3.0), timeout),
            allow_redirects=False,
            stream=True,
        ) as answer:
            raw = answer.raw.read(EXCERPT_CHARS * 4, decode_content=True) or b""
            return answer.status_code, raw.decode("utf-8", "replace")[:EXCERPT_CHARS], ""
    except requests.Timeout as exc:
        return None, "", f"timed out after {timeout:g} s: {exc}"[:EXCERPT_CHARS]
    except requests.ConnectionError as exc:
        return None, "", f"could not connect: {exc}"[:EXCERPT_CHARS]
    except (requests.RequestException, OSError) as exc:
        return None, "", f"{type(exc).__name__}: {exc}"[:EXCERPT_CHARS]


def _transient(status_code: int | None) -> bool:
    """Worth another try: no answer (connection, timeout), a 5xx, or 429 (slow down)."""
    return status_code is None or status_code >= 500 or status_code == 429


def owner_withholds(hook: Webhook, proof_id: int | None) -> str:
    """Why `hook` may not be sent an event about proof `proof_id`, or "": a hook sends what its
    owner may see, since its owner chose where it goes. An admin who also grades blind could
    otherwise point a hook at their own server and read the labels of the proofs they hold
    (core.visibility's rule, asked at each try, so a replay asks again). A hook with no owner
    (the admin was deleted) or whose owner is no longer an admin tells of no proof."""
    if proof_id is None:
        return ""
    owner = hook.owner
    if owner is None:
        return (
            "withheld: the webhook has no owner (its admin was deleted); an admin who changes "
            "its URL or events owns it"
        )
    if not owner.is_active or Role.ADMIN not in user_roles(owner):
        return (
            f"withheld: the webhook's owner {owner.get_username()} is no longer an admin; an "
            "admin who changes its URL or events owns it"
        )
    if blind_to_proof(owner, proof_id):
        return (
            f"withheld: the webhook's owner {owner.get_username()} grades this proof blind as an "
            "expert; replay this delivery once they have submitted their grade"
        )
    return ""


def delivery_attempt(*, delivery_id: int) -> Outcome:
    """One try of a delivery the job runner has claimed (its `attempts` counts this try): sent
    signed with a fresh timestamp, the answer recorded as a DeliveryAttempt. A 2xx delivers; a
    transient failure asks for a retry until WEBHOOK_MAX_ATTEMPTS tries; anything else (a 4xx,
    a 3xx, the last try) fails the delivery with the reason."""
    delivery = Delivery.objects.select_related("webhook__owner").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != JobStatus.RUNNING:
        return Outcome("skipped")
    hook = delivery.webhook
    number = delivery.attempts
    own = Delivery.objects.filter(pk=delivery_id, attempts=number, status=JobStatus.RUNNING)
    if not hook.active:
        delivery_fail(delivery_id=delivery_id, reason="the webhook was deactivated")
        return Outcome("failed", number)
    withheld = owner_withholds(hook, delivery.proof_id)
    if withheld:
        delivery_fail(delivery_id=delivery_id, reason=withheld)
        return Outcome("failed", number)
    timestamp = int(time.time())
    headers = signed_headers(
        secret=hook.secret, message_id=delivery.message_id, body=delivery.body, timestamp=timestamp
    )
    started = time.perf_counter()
    at = timezone.now()
    code, excerpt, error = _post(hook.url, delivery.body, headers)
    DeliveryAttempt.objects.create(
        delivery_id=delivery_id,
        number=number,
        at=at,
        status_code=code,
        response_excerpt=excerpt,
        error=error,
        duration_ms=round((time.perf_counter() - started) * 1000),
    )
    said = error or f"the receiver answered {code}"
    if code is not None and 200 <= code < 300:
        own.update(status=JobStatus.SUCCEEDED, error="", finished_at=timezone.now())
        return Outcome("delivered", number)
    if _transient(code) and number < settings.WEBHOOK_MAX_ATTEMPTS:
        own.update(error=f"try {number}: {said}; trying again")
        return Outcome("retry", number)
    reason = f"try {number}: {said}"
    if _transient(code):
        reason += f"; given up after {number} tries"
    own.update(status=JobStatus.FAILED, error=reason, finished_at=timezone.now())
    return Outcome("failed", number)


def retry_delay(number: int) -> float:
    """Seconds before try `number` + 1: WEBHOOK_RETRY_SECONDS, doubling after each try."""
    return settings.WEBHOOK_RETRY_SECONDS * 2 ** max(0, number - 1)


def delivery_fail(*, delivery_id: int, reason: str) -> None:
    """Records a failure outside a try's own outcome (its worker kept dying, no broker)."""
    Delivery.objects.filter(pk=delivery_id).exclude(status=JobStatus.SUCCEEDED).update(
        status=JobStatus.FAILED, error=reason[:2000], finished_at=timezone.now()
    )


@transaction.atomic
def delivery_replay(*, delivery: Delivery) -> Delivery:
    """Queues the delivery again, as a delivery of its own (the same body and message id, so a
    receiver that keeps the ids it has seen can tell a replay of what it already took)."""
    hook = Webhook.objects.select_for_update().get(pk=delivery.webhook_id)
    if not hook.active:
        raise WebhookError("webhook", "the webhook is inactive: activate it to replay")
    replay = Delivery.objects.create(
        webhook=hook,
        event=delivery.event,
        proof_id=delivery.proof_id,
        message_id=delivery.message_id,
        body=delivery.body,
        replay_of=delivery.replay_of or delivery,
    )
    job_send_on_commit(KIND, [replay.pk])
    return replay
