"""Labels derived from the judgements (single, agreement) no longer make their item final:
the experts may revise until the item is adjudicated or the campaign closes."""

from django.db import migrations

DERIVED = ["single", "agreement"]


def reopen(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    Item.objects.filter(
        is_final=True, is_gold=False, final_label__source__in=DERIVED
    ).update(is_final=False)


def refinalise(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    Item.objects.filter(is_final=False, final_label__isnull=False).update(is_final=True)


class Migration(migrations.Migration):
    dependencies = [("adjudication", "0002_labelling_loop")]

    operations = [migrations.RunPython(reopen, refinalise)]
