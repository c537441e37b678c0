from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('problems', '0007_reread_verdicts'),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='verifieranalysis',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('kept_contract', False), ('score__isnull', True)), models.Q(('kept_contract', True), ('score__isnull', False)), _connector='OR'), name='analysis_score_iff_contract', violation_error_message='An analysis has a score exactly when it kept the output contract.'),
        ),
    ]
