"""The rater-model fit records which candidate model held-out calibration chose, each
candidate's held-out score, the temperature applied and the calibration measured at fit time
(issue 33). Existing fits were Dawid-Skene fits with nothing measured: the defaults say so."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('estimation', '0002_rater_model_refit_jobs'),
    ]

    operations = [
        migrations.AddField(
            model_name='ratermodelfit',
            name='calibration',
            field=models.JSONField(default=dict),
        ),
        migrations.AddField(
            model_name='ratermodelfit',
            name='heldout_scores',
            field=models.JSONField(default=dict),
        ),
        migrations.AddField(
            model_name='ratermodelfit',
            name='model',
            field=models.CharField(default='dawid-skene', max_length=40),
        ),
        migrations.AddField(
            model_name='ratermodelfit',
            name='temperature',
            field=models.FloatField(default=1.0),
        ),
    ]
