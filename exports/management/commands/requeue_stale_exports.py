"""python manage.py requeue_stale_exports [--minutes N] [--max-attempts N]"""

from datetime import timedelta

from django.core.management.base import BaseCommand

from exports.services import export_jobs_requeue_stale
from exports.services.datasets import MAX_ATTEMPTS, STALE_AFTER


class Command(BaseCommand):
    help = (
        "Restarts the export jobs whose worker died (running with no heartbeat, or waiting, for "
        "longer than --minutes); after --max-attempts runs a job is marked failed and its files "
        "removed. Safe to run from cron at any time."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--minutes",
            type=float,
            default=STALE_AFTER.total_seconds() / 60,
            help="How long a job may go without a sign of its worker (default %(default)s).",
        )
        parser.add_argument("--max-attempts", type=int, default=MAX_ATTEMPTS)

    def handle(self, *args, minutes: float, max_attempts: int, **options):
        sweep = export_jobs_requeue_stale(
            stale_after=timedelta(minutes=minutes), max_attempts=max_attempts
        )
        self.stdout.write(
            f"queued again: {sweep.requeued or 'none'}; marked failed: {sweep.failed or 'none'}"
        )
