"""python manage.py fit_rater_model --campaign SLUG [--campaign SLUG ...] | --all"""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from estimation.services.confidence import campaign_rater_model_fit


class Command(BaseCommand):
    help = (
        "Fits each campaign's rater model (over experts and automatic graders, chosen by held-out "
        "calibration) and "
        "stores every final label's confidence: after a batch of labels, or from a nightly job."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", action="append", default=[], help="Campaign slug.")
        parser.add_argument("--all", action="store_true", help="Every campaign.")

    def handle(self, *args, **options):
        if options["all"] == bool(options["campaign"]):
            raise CommandError("Name campaigns with --campaign, or give --all (not both).")
        campaigns = Campaign.objects.order_by("slug")
        if not options["all"]:
            campaigns = campaigns.filter(slug__in=options["campaign"])
            missing = set(options["campaign"]) - set(campaigns.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"--campaign: no campaign {', '.join(sorted(missing))}")
        for campaign in campaigns:
            fit = campaign_rater_model_fit(campaign_id=campaign.pk)
            if fit is None:
                self.stdout.write(f"{campaign.slug}: no judgement, nothing fitted")
            else:
                self.stdout.write(
                    f"{campaign.slug}: {fit.judgements} judgements of {fit.items} items by "
                    f"{len(fit.raters)} raters ({fit.gold} known), {fit.iterations} rounds, "
                    f"model {fit.model}"
                )
