"""`manage.py demo_setup`: role groups, demo accounts and the demo corpus, for `make run`."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from problems.demo.loader import demo_accounts_ensure, demo_corpus_load


class Command(BaseCommand):
    help = (
        "Creates the role groups, the demo accounts (printing their log-ins) and the demo "
        "corpus. Safe to run again: it changes nothing the second time."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--allow-without-debug",
            action="store_true",
            help="Run even though DEBUG is off (the demo accounts have published passwords).",
        )
        parser.add_argument("--no-accounts", action="store_true", help="Load the demo corpus only.")

    def handle(self, *args, allow_without_debug=False, no_accounts=False, **options):
        if not settings.DEBUG and not allow_without_debug and not no_accounts:
            raise CommandError(
                "DEBUG is off: demo accounts have published passwords and do not belong on a "
                "real deployment. Use --no-accounts, or --allow-without-debug if you mean it."
            )
        counts = demo_corpus_load()
        self.stdout.write(
            "Demo corpus: {problems} problems, {reference_solutions} reference solutions, "
            "{proofs} proofs, {analyses} verifier analyses.".format(**counts)
        )
        if no_accounts:
            return
        accounts = demo_accounts_ensure()
        self.stdout.write("Demo log-ins (user name / password / role):")
        for account in accounts:
            self.stdout.write(
                f"  {account.username:<12} {account.password:<24} {account.role.value}"
            )
