"""A hook's creator becomes its owner (who last set its URL or events), and a delivery keeps the
proof its event is about: what a hook tells of proofs is what its owner may see."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("problems", "0010_statement_versions"),
        ("webhooks", "0001_deliveries"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameField(model_name="webhook", old_name="created_by", new_name="owner"),
        migrations.AlterField(
            model_name="webhook",
            name="owner",
            field=models.ForeignKey(
                help_text="The admin who last set where deliveries go and of what (the URL, the "
                "events): a delivery about a proof is sent only while they may see it "
                "(webhooks.services).",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="webhooks",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="delivery",
            name="proof",
            field=models.ForeignKey(
                blank=True,
                help_text="The proof the event is about (a label, a case), whose blindness it "
                "keeps.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="problems.proof",
            ),
        ),
    ]
