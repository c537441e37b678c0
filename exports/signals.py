"""Events of the exports app that higher apps react to (docs/ARCHITECTURE.md: signals and receivers)."""

from django.dispatch import Signal

# Sent on commit with job_id: int and status: str ("succeeded" or "failed") when an export job
# finishes: its files are stored, or its failure is recorded (its own error, or its worker kept
# dying). Webhooks tell the admins' receivers.
export_finished = Signal()
