"""Events of the jobs app that higher apps react to (docs/ARCHITECTURE.md: signals and receivers)."""

from django.dispatch import Signal

# Sent on commit with kind: str (the job kind's name, jobs.kinds), job_id: int and reason: str
# (the row's `error`, where it has one) when a job of any kind is recorded as failed: by its own
# service while the job runner ran it (jobs.services.job_run reads the row's status after the
# run), by the sweep after its last attempt, or when its message could not be queued.
job_failed = Signal()
