"""`manage.py login_unlock NAME`: unlocks a user name that failed too many log-ins from several
addresses (accounts.login_limits) and forgets its failures."""

from django.core.management.base import BaseCommand

from accounts.login_limits import login_unlock


class Command(BaseCommand):
    help = "Unlocks a user name locked after many failed log-ins, and forgets its failures."

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **options):
        was = login_unlock(username)
        self.stdout.write(
            f"{username}: {'unlocked' if was else 'was not locked'}; failures forgotten"
        )
