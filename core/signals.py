"""Upward events told once their transaction commits (at once outside one): every receiver is
called even when one raises, and one that raises is logged, never undoing what the event tells
of (a job's outcome, an export, an import, a case)."""

import logging

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)


def send_on_commit(signal: Signal, *, sender, event: str, **kwargs) -> None:
    """`signal.send_robust(sender, **kwargs)` on commit; `event` names it in the log."""

    def send() -> None:
        for receiver, response in signal.send_robust(sender=sender, **kwargs):
            if isinstance(response, Exception):
                logger.error("%s: receiver %r failed", event, receiver, exc_info=response)

    transaction.on_commit(send)
