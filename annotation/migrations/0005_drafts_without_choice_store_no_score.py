"""Drafts that chose nothing store no score. The grading page used to save a draft as soon as a
checklist item opened, its final score following the empty checklist's computed 0: a draft with
no award and no deduction loses a final score of 0, and then its computed score, so that a
reload never restores a score nobody chose. Submitted grades are left as they are."""

from django.db import migrations


def forget_unchosen_scores(apps, schema_editor):
    Grade = apps.get_model("annotation", "Grade")
    unchosen = Grade.objects.filter(
        status="draft", awards={}, deductions=[], computed_score__isnull=False
    )
    unchosen.filter(score=0).update(score=None)
    unchosen.filter(score__isnull=True).update(computed_score=None)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0004_campaign_generator_config")]

    operations = [migrations.RunPython(forget_unchosen_scores, migrations.RunPython.noop)]
