"""The calibration gate's models move here from annotation with their rows: the state takes them
over on the tables they had (annotation 0010 then drops them from annotation's state), and the
tables are renamed to this app's names."""

from decimal import Decimal

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0009_grade_version"),
        ("calibration", "0002_expert_retakes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="CalibrationRequirement",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "max_mae",
                            models.DecimalField(
                                decimal_places=2,
                                default=Decimal("1"),
                                help_text="Largest mean |error|.",
                                max_digits=4,
                            ),
                        ),
                        ("min_items", models.PositiveSmallIntegerField(default=5)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "campaign",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="calibration_requirement",
                                to="annotation.campaign",
                            ),
                        ),
                        (
                            "round",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="required_by",
                                to="annotation.campaign",
                            ),
                        ),
                        (
                            "set_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "annotation_calibrationrequirement",
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(("max_mae__gte", 0)),
                                name="calib_req_mae_positive",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("min_items__gte", 1)),
                                name="calib_req_min_items_1",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("round", models.F("campaign")), _negated=True
                                ),
                                name="calib_req_not_itself",
                            ),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="CalibrationPass",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("items", models.PositiveIntegerField()),
                        ("mae", models.DecimalField(decimal_places=3, max_digits=5)),
                        ("passed_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "expert",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="calibration_passes",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "requirement",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="passes",
                                to="calibration.calibrationrequirement",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "annotation_calibrationpass",
                        "ordering": ["requirement_id", "passed_at", "id"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("requirement", "expert"), name="calib_pass_unique"
                            )
                        ],
                    },
                ),
                migrations.AlterField(
                    model_name="calibrationretake",
                    name="requirement",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="retakes",
                        to="calibration.calibrationrequirement",
                    ),
                ),
            ],
        ),
        migrations.AlterModelTable(name="calibrationrequirement", table=None),
        migrations.AlterModelTable(name="calibrationpass", table=None),
    ]
