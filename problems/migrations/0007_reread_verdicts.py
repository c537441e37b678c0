# A verifier analysis has a score exactly when its text keeps the output contract (issue 34):
# the stored rows are re-read through the parser here, and 0008 makes the database hold the rule
# (apart, so that no update is pending when the table is altered).

from django.db import migrations

from llm.scores import verifier_score
from problems.migrations._verdicts import verdicts_reread


def reread(apps, schema_editor):
    verdicts_reread(apps.get_model("problems", "VerifierAnalysis"), verifier_score)


class Migration(migrations.Migration):

    dependencies = [
        ('problems', '0006_rendered_text'),
    ]

    operations = [
        migrations.RunPython(reread, migrations.RunPython.noop),
    ]
