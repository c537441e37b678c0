from django.core.management.base import BaseCommand

from adjudication.services import imported_ratings_materialise


class Command(BaseCommand):
    help = (
        "Turns the expert ratings kept with imported proofs into judgements and final labels "
        "of source 'imported' (idempotent)."
    )

    def handle(self, *args, **options) -> None:
        report = imported_ratings_materialise()
        self.stdout.write(report.summary())
