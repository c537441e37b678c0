"""The calibration gate's models now belong to the calibration app (calibration 0003 took them
over with their tables and rows): only annotation's state lets go of them."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0009_grade_version"),
        ("calibration", "0003_calibration_gate_from_annotation"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name="CalibrationPass"),
                migrations.DeleteModel(name="CalibrationRequirement"),
            ],
        )
    ]
