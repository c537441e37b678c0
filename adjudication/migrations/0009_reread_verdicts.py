# A meta-verification has a rating exactly when its text keeps the output contract (issue 34):
# the stored rows are re-read through the parser here, and 0010 makes the database hold the rule.

from django.db import migrations

from llm.meta_scores import meta_verifier_score
from problems.migrations._verdicts import verdicts_reread


def reread(apps, schema_editor):
    verdicts_reread(apps.get_model("adjudication", "MetaVerification"), meta_verifier_score)


class Migration(migrations.Migration):

    dependencies = [
        ('adjudication', '0008_rater_model_fit_to_estimation'),
    ]

    operations = [
        migrations.RunPython(reread, migrations.RunPython.noop),
    ]
