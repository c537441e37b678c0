"""Leased assignments: one per (item, expert); active while leased, then released, or done once
submitted."""

from django.conf import settings
from django.db import models

from annotation.models.campaigns import Item


class AssignmentStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    RELEASED = "released", "Released"
    DONE = "done", "Done"


class Assignment(models.Model):
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    expert = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    leased_until = models.DateTimeField()
    status = models.CharField(
        max_length=10, choices=AssignmentStatus.choices, default=AssignmentStatus.ACTIVE
    )
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The admin who assigned it by hand; empty when the expert pressed next.",
    )
    passed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the expert last moved on from the item without submitting (Next): "
        "passed work comes back after the rest, oldest pass first.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "expert"], name="assignment_item_expert")
        ]
        indexes = [
            models.Index(fields=["item", "status"], name="assignment_item_status"),
            models.Index(fields=["expert", "status"], name="assignment_expert_status"),
        ]

    def __str__(self) -> str:
        return f"item {self.item_id} to {self.expert_id} ({self.status})"
