"""IMO-ProofBench guidelines imported before band schemes were kept as text only (a draft with
no structure that could not be approved): read them again as band schemes. Only such drafts
change; no item pins them."""

from django.db import migrations


def reparse(apps, schema_editor):
    from rubrics.structure import parse_scheme

    MarkingScheme = apps.get_model("rubrics", "MarkingScheme")
    stale = MarkingScheme.objects.filter(
        provenance__format="imobench_guidelines", status="draft", is_valid=False, structure={}
    )
    for scheme in stale:
        result = parse_scheme(scheme.text, "imobench_guidelines")
        if result.scheme is None:
            continue
        scheme.structure = result.scheme.to_dict()
        scheme.validation = [message.to_dict() for message in result.messages]
        scheme.is_valid = result.is_valid
        scheme.guidelines = ""
        scheme.save(update_fields=["structure", "validation", "is_valid", "guidelines"])


class Migration(migrations.Migration):
    dependencies = [("rubrics", "0005_generation_task_may_share_a_version")]

    operations = [migrations.RunPython(reparse, migrations.RunPython.noop)]
