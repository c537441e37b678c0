"""Webhooks: the URLs admins register per event, and each delivery of an event to one of them.

A delivery is a background job (jobs.kinds: kind `webhook_delivery`): status, heartbeat and
attempts as every job's; each HTTP try is a DeliveryAttempt. Writes go through
webhooks.services; reads through webhooks.selectors.
"""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from jobs.models import JobLiveness, JobStatus


class Event(models.TextChoices):
    """What a hook can be told of (docs/webhooks.md lists each payload)."""

    ITEM_LABELLED = "item.labelled", "An item's final label is made or changed"
    CASE_OPENED = "case.opened", "An adjudication case opens"
    CASE_SETTLED = "case.settled", "An adjudication case is settled"
    EXPORT_SUCCEEDED = "export.succeeded", "An export finished with its files"
    EXPORT_FAILED = "export.failed", "An export failed"
    IMPORT_FINISHED = "import.finished", "An import finished (committed or not)"
    JOB_FAILED = "job.failed", "A background job of any kind failed"


class Webhook(models.Model):
    url = models.URLField(max_length=2000, help_text="Where deliveries are POSTed (http or https).")
    events = ArrayField(models.CharField(max_length=40, choices=Event.choices))
    active = models.BooleanField(default=True, help_text="An inactive hook is sent nothing.")
    secret = models.CharField(
        max_length=100, help_text="The key of each delivery's HMAC-SHA256 signature."
    )
    description = models.CharField(max_length=200, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="webhooks",
        help_text="The admin who last set where deliveries go and of what (the URL, the events): "
        "a delivery about a proof is sent only while they may see it (webhooks.services).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"webhook {self.pk} → {self.url}"


class Delivery(JobLiveness):
    """One event sent to one hook: the body is written once, when the event comes, and every
    try (and a replay, a delivery of its own) sends the same bytes under the same message id."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40, choices=Event.choices)
    proof = models.ForeignKey(
        "problems.Proof",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The proof the event is about (a label, a case), whose blindness it keeps.",
    )
    message_id = models.CharField(max_length=60, help_text="The webhook-id header.")
    body = models.TextField(help_text="The JSON body, exactly as sent and signed.")
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.PENDING)
    error = models.TextField(blank=True)
    replay_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="replays"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["webhook", "-created_at"], name="delivery_hook_recent")]

    def __str__(self) -> str:
        return f"delivery {self.pk} of {self.event} to webhook {self.webhook_id} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in (JobStatus.PENDING, JobStatus.RUNNING, JobStatus.RETRYING)


class DeliveryAttempt(models.Model):
    """One HTTP try of a delivery: what the receiver answered, or why nothing came back."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="tries")
    number = models.PositiveSmallIntegerField()
    at = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_excerpt = models.CharField(max_length=500, blank=True)
    error = models.CharField(max_length=500, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["delivery", "number", "id"]

    def __str__(self) -> str:
        outcome = self.status_code if self.status_code is not None else self.error[:40]
        return f"try {self.number} of delivery {self.delivery_id}: {outcome}"

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300
