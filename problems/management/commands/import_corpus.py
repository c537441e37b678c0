"""python manage.py import_corpus PATH [--format F] [--dry-run] [--licence L]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from problems.importers import FORMATS
from problems.services import corpus_import


class Command(BaseCommand):
    help = (
        "Imports problems, reference solutions, proofs and verifier analyses from a file, a "
        "folder or a .zip (formats: " + ", ".join(FORMATS) + "; detected when not given). "
        "A bad record fails alone: each error names its file, line and field, every other "
        "record is imported, and the exit status is 1."
    )
    # The system checks load every template tag library and the URL configuration, about
    # 0.6 CPU-seconds of a 20,000-proof import; `manage.py check`, runserver and migrate run them.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", choices=FORMATS, dest="fmt")
        parser.add_argument(
            "--dry-run", action="store_true", help="Report what would change; write nothing."
        )
        parser.add_argument(
            "--licence",
            default="",
            help="The licence of the whole source (e.g. CC-BY-4.0), recorded on every record "
            "that states none; by default the known licence of the format's public dataset.",
        )

    def handle(self, *args, path: Path, fmt: str | None, dry_run: bool, licence: str, **options):
        report = corpus_import(path=path, fmt=fmt, dry_run=dry_run, licence=licence.strip())
        for line in report.lines():
            self.stdout.write(line)
        if not report.ok:
            raise CommandError(f"{path}: {report.outcome()}")
        if not dry_run:
            self.stdout.write(self.style.SUCCESS(f"Imported {path}."))
