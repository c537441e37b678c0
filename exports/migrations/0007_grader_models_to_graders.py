"""The grader evaluation models now belong to the graders app (graders 0001 took them over with
their tables and rows): only exports' state lets go of them."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('graders', '0001_grader_models_from_exports'),
        ('exports', '0006_job_status_one_vocabulary'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.RemoveField(
                    model_name='graderprediction',
                    name='evaluation',
                ),
                migrations.RemoveField(
                    model_name='graderpredictionfailure',
                    name='evaluation',
                ),
                migrations.RemoveField(
                    model_name='graderprediction',
                    name='item',
                ),
                migrations.RemoveField(
                    model_name='graderpredictionfailure',
                    name='item',
                ),
                migrations.DeleteModel(
                    name='GraderEvaluation',
                ),
                migrations.DeleteModel(
                    name='GraderPrediction',
                ),
                migrations.DeleteModel(
                    name='GraderPredictionFailure',
                ),
            ],
        )
    ]
