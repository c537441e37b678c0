"""`manage.py demo_setup`: the demo platform for `make run`. Role groups, demo accounts and the
demo corpus (problems), then each app's demo in dependency order: marking schemes (rubrics),
campaigns and grades (annotation), final labels and cases (adjudication). It lives in the lowest
app that sees every loader it calls (adjudication); running it again changes nothing.
With --keep (`make run`) a demo loaded earlier is kept as it is, in one query, so a second start
does not load it again (nor undo what was done with it since)."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from adjudication import demo as adjudication_demo
from adjudication.models import AdjudicationCase, CaseStatus
from annotation import demo as annotation_demo
from annotation.demo import GRADING_SLUG
from problems.demo.loader import (
    DEMO_ACCOUNTS,
    demo_accounts_ensure,
    demo_accounts_loaded,
    demo_corpus_load,
)
from rubrics import demo as rubrics_demo

WHERE_TO_START = (
    ("admin", "/annotation/demo-proof-grading/ (progress, members, assignments), "
              "/rubrics/ (schemes), /adjudication/campaigns/demo-proof-grading/agreement/"),
    ("expert1", "/annotation/ -> 'Demo: grading the demo proofs' -> Grade next"),
    ("expert2", "/annotation/ -> Grade next (a proof expert1 graded is waiting for you)"),
    ("adjudicator", "/adjudication/ (one open case: two experts disagree)"),
    ("researcher", "/exports/ (export the demo campaign's labels: JSONL, CSV or Parquet)"),
)  # fmt: skip


class Command(BaseCommand):
    help = (
        "Creates the role groups, the demo accounts (printing their log-ins), the demo corpus, "
        "marking schemes, campaigns with grades, final labels and an open adjudication case. "
        "Safe to run again: it changes nothing the second time."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--allow-without-debug",
            action="store_true",
            help="Run even though DEBUG is off (the demo accounts have published passwords).",
        )
        parser.add_argument(
            "--no-accounts",
            action="store_true",
            help="Load the demo corpus only (no accounts, so no schemes, campaigns or grades).",
        )
        parser.add_argument(
            "--keep",
            action="store_true",
            help="Keep a demo loaded earlier (its accounts and its adjudicated case are there) "
            "as it is; load it only where it is missing.",
        )

    def handle(self, *args, allow_without_debug=False, no_accounts=False, keep=False, **options):
        if not settings.DEBUG and not allow_without_debug and not no_accounts:
            raise CommandError(
                "DEBUG is off: demo accounts have published passwords and do not belong on a "
                "real deployment. Use --no-accounts, or --allow-without-debug if you mean it."
            )
        if keep and not no_accounts and demo_loaded():
            self.stdout.write("Demo kept as an earlier run left it (not loaded again).")
            self._where_to_start(DEMO_ACCOUNTS)
            return
        counts = demo_corpus_load()
        self.stdout.write(
            "Demo corpus: {problems} problems, {reference_solutions} reference solutions, "
            "{proofs} proofs, {analyses} verifier analyses.".format(**counts)
        )
        if no_accounts:
            return
        accounts = demo_accounts_ensure()
        for loader in (rubrics_demo, annotation_demo, adjudication_demo):
            self.stdout.write(loader.demo_load())
        self._where_to_start(accounts)

    def _where_to_start(self, accounts) -> None:
        self.stdout.write("Demo log-ins (user name / password / role):")
        for account in accounts:
            self.stdout.write(
                f"  {account.username:<12} {account.password:<24} {account.role.value}"
            )
        self.stdout.write("Where to start (after logging in):")
        for username, where in WHERE_TO_START:
            self.stdout.write(f"  {username:<12} {where}")


def demo_loaded() -> bool:
    """Whether an earlier demo_setup ran to its end: every demo account is there and the last
    loader's work (the adjudicated case of the demo campaign) too."""
    return len(demo_accounts_loaded()) == len(DEMO_ACCOUNTS) and (
        AdjudicationCase.objects.filter(
            item__campaign__slug=GRADING_SLUG, status=CaseStatus.RESOLVED
        ).exists()
    )
