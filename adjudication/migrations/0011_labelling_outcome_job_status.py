"""The labelling loop's per-proof job keeps its state in the one JobStatus, like every other job:
`outcome` (pending, running, labelled, routed, failed) becomes `status` (pending, running,
retrying, succeeded, failed) and, once it succeeded, `decision` (labelled or routed)."""

from django.db import migrations, models
from django.db.models import Q


def forwards(apps, schema_editor):
    outcome = apps.get_model("adjudication", "LabellingOutcome")
    for decision in ("labelled", "routed"):
        outcome.objects.filter(status=decision).update(status="succeeded", decision=decision)


def backwards(apps, schema_editor):
    outcome = apps.get_model("adjudication", "LabellingOutcome")
    for decision in ("labelled", "routed"):
        outcome.objects.filter(decision=decision).update(status=decision)
    outcome.objects.filter(status="retrying").update(status="pending")


class Migration(migrations.Migration):
    dependencies = [
        ("adjudication", "0010_verdict_only_from_a_kept_contract"),
    ]

    operations = [
        migrations.RenameField("labellingoutcome", "outcome", "status"),
        migrations.AddField(
            model_name="labellingoutcome",
            name="decision",
            field=models.CharField(
                blank=True,
                choices=[("labelled", "Labelled automatically"), ("routed", "Routed to experts")],
                max_length=10,
            ),
        ),
        migrations.RunPython(forwards, backwards),
        migrations.AlterField(
            model_name="labellingoutcome",
            name="status",
            field=models.CharField(
                choices=[
                    ("pending", "Waiting"),
                    ("running", "Running"),
                    ("retrying", "Waiting to retry"),
                    ("succeeded", "Done"),
                    ("failed", "Failed"),
                ],
                default="pending",
                max_length=10,
            ),
        ),
        migrations.AddConstraint(
            model_name="labellingoutcome",
            constraint=models.CheckConstraint(
                condition=Q(status="succeeded", decision__in=["labelled", "routed"])
                | (~Q(status="succeeded") & Q(decision="")),
                name="labelling_outcome_decided_when_succeeded",
            ),
        ),
    ]
