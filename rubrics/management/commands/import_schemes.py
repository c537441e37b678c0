"""`manage.py import_schemes`: makes scheme versions from every problem's
metadata["imported_schemes"] (the rows imported before the rubrics app listened to imports).
Safe to run again: what was imported once is not imported twice."""

from django.core.management.base import BaseCommand

from problems.models import Problem
from rubrics.services import schemes_import_for_problems

BATCH = 500


class Command(BaseCommand):
    help = "Import marking schemes kept in problems' metadata (idempotent)."

    def handle(self, *args, **options) -> None:
        ids = list(
            Problem.objects.filter(metadata__has_key="imported_schemes")
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        created = unchanged = 0
        for start in range(0, len(ids), BATCH):
            counts = schemes_import_for_problems(problem_ids=ids[start : start + BATCH])
            created += counts.created
            unchanged += counts.unchanged
            for message in counts.messages:
                self.stderr.write(message)
        self.stdout.write(
            f"{len(ids)} problem(s) with imported schemes: {created} version(s) created, "
            f"{unchanged} already imported."
        )
