"""The grader evaluation models move here from exports with their tables and rows: the state takes
them over on the tables they had (`db_table` keeps the exports_ names), and exports 0007 then
drops them from exports' state. No table changes."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('exports', '0006_job_status_one_vocabulary'),
        ('annotation', '0011_expert_progress_and_grade_sequence'),
        ('rubrics', '0007_job_status_one_vocabulary'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='GraderEvaluation',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('heartbeat_at', models.DateTimeField(blank=True, default=django.utils.timezone.now, help_text='Last sign of life of the worker running the job (or when it was queued).', null=True)),
                        ('attempts', models.PositiveSmallIntegerField(default=0, help_text='Runs that took the job.')),
                        ('name', models.CharField(help_text='The grader, e.g. o3 REF+MS x5.', max_length=200)),
                        ('source', models.CharField(choices=[('proofgrader_jsonl', 'ProofGrader-style JSONL {problem_id, generator, score}'), ('deepseek_outputs', 'DeepSeekMath-V2 outputs (average_automatic_rating)'), ('endpoint', "A grader endpoint run over the campaign's labelled proofs")], max_length=30)),
                        ('prediction_scale', models.CharField(default='0-7', max_length=10)),
                        ('aggregation', models.CharField(default='mean', max_length=10)),
                        ('runs', models.PositiveSmallIntegerField(default=1)),
                        ('parameters', models.JSONField(blank=True, default=dict, help_text='Endpoint, model and prompt of an endpoint run.')),
                        ('status', models.CharField(choices=[('pending', 'Waiting'), ('running', 'Running'), ('retrying', 'Waiting to retry'), ('succeeded', 'Done'), ('failed', 'Failed')], default='pending', max_length=12)),
                        ('processed', models.PositiveIntegerField(default=0)),
                        ('total', models.PositiveIntegerField(blank=True, null=True)),
                        ('counts', models.JSONField(blank=True, default=dict)),
                        ('report', models.JSONField(blank=True, default=dict)),
                        ('error', models.TextField(blank=True)),
                        ('prompt_tokens', models.PositiveBigIntegerField(default=0)),
                        ('completion_tokens', models.PositiveBigIntegerField(default=0)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='grader_evaluations', to='annotation.campaign')),
                        ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('endpoint', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='rubrics.llmendpoint')),
                    ],
                    options={
                        'db_table': 'exports_graderevaluation',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='GraderPrediction',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('run_index', models.PositiveSmallIntegerField(default=0)),
                        ('score', models.FloatField()),
                        ('assessment', models.TextField(blank=True)),
                        ('errors', models.JSONField(blank=True, default=list)),
                        ('evaluation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='predictions', to='graders.graderevaluation')),
                        ('item', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.item')),
                    ],
                    options={
                        'db_table': 'exports_graderprediction',
                        'ordering': ['evaluation_id', 'item_id', 'run_index'],
                        'constraints': [models.UniqueConstraint(fields=('evaluation', 'item', 'run_index'), name='prediction_unique_run')],
                    },
                ),
                migrations.CreateModel(
                    name='GraderPredictionFailure',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('run_index', models.PositiveSmallIntegerField(default=0)),
                        ('reason', models.TextField()),
                        ('raw_reply', models.TextField(blank=True)),
                        ('finish_reason', models.CharField(blank=True, max_length=30)),
                        ('created_at', models.DateTimeField(auto_now=True)),
                        ('evaluation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='failures', to='graders.graderevaluation')),
                        ('item', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.item')),
                    ],
                    options={
                        'db_table': 'exports_graderpredictionfailure',
                        'ordering': ['evaluation_id', 'item_id', 'run_index'],
                        'constraints': [models.UniqueConstraint(fields=('evaluation', 'item', 'run_index'), name='prediction_failure_unique_run')],
                    },
                ),
            ],
        )
    ]
