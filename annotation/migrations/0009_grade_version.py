from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0008_routing_by_uncertainty")]

    operations = [
        migrations.AddField(
            model_name="grade",
            name="version",
            field=models.PositiveIntegerField(
                default=0,
                help_text="Incremented on every write; a draft or submission names the version "
                "it was based on, and one based on an older version is refused (409).",
            ),
        ),
    ]
