"""python manage.py sweep_jobs: what celery beat runs every JOB_SWEEP_SECONDS, run once now."""

from django.core.management.base import BaseCommand

from jobs.services import jobs_sweep


class Command(BaseCommand):
    help = (
        "Queues again every job whose worker stopped (no heartbeat for JOB_STALE_SECONDS), or "
        "fails it with the reason after JOB_MAX_ATTEMPTS runs. Safe to run at any time."
    )

    def handle(self, *args, **options):
        sweep = jobs_sweep()
        self.stdout.write(
            f"queued again: {sweep.requeued or 'none'}; marked failed: {sweep.failed or 'none'}"
        )
