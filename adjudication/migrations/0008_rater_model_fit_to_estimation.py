"""The rater-model fit now belongs to the estimation app (estimation 0001 took it over with its
table and rows): only adjudication's state lets go of it."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('estimation', '0001_rater_model_fit_from_adjudication'),
        ('adjudication', '0007_job_status_one_vocabulary'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(
                    name='RaterModelFit',
                ),
            ],
        )
    ]
