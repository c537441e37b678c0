"""The rater-model fit moved from adjudication to estimation (estimation 0001, adjudication 0008)
on the table it had: migrate back to before the move, store a fit there, migrate forwards, and
read it through today's model."""

from django.utils import timezone

from estimation.models import RaterModelFit

BEFORE = [("adjudication", "0007_job_status_one_vocabulary"), ("estimation", None)]


def test_the_fit_keeps_its_row_when_it_moves_to_estimation(migrations):
    old = migrations.models_before(BEFORE)
    campaign = old.get_model("annotation", "Campaign").objects.create(slug="main", name="Main")
    fit = old.get_model("adjudication", "RaterModelFit").objects.create(
        campaign=campaign, classes=["0", "1"], priors=[0.5, 0.5], items=3, fitted_at=timezone.now()
    )

    migrations.migrate()

    moved = RaterModelFit.objects.get(pk=fit.pk)
    assert (moved.campaign.slug, moved.classes, moved.items) == ("main", ["0", "1"], 3)
    assert moved.campaign.rater_model == moved
    assert RaterModelFit._meta.db_table == "adjudication_ratermodelfit"
