"""The rater-model fit moves here from adjudication with its table and rows: the state takes it
over on the table it had (`db_table` keeps adjudication_ratermodelfit), and adjudication 0008
then drops it from adjudication's state. No table changes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('adjudication', '0007_job_status_one_vocabulary'),
        ('annotation', '0011_expert_progress_and_grade_sequence'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='RaterModelFit',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('classes', models.JSONField(default=list)),
                        ('priors', models.JSONField(default=list)),
                        ('raters', models.JSONField(default=list)),
                        ('items', models.PositiveIntegerField(default=0)),
                        ('gold', models.PositiveIntegerField(default=0)),
                        ('judgements', models.PositiveIntegerField(default=0)),
                        ('iterations', models.PositiveSmallIntegerField(default=0)),
                        ('fitted_at', models.DateTimeField()),
                        ('campaign', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='rater_model', to='annotation.campaign')),
                    ],
                    options={
                        'db_table': 'adjudication_ratermodelfit',
                    },
                ),
            ],
        )
    ]
