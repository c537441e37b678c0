from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('adjudication', '0009_reread_verdicts'),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='metaverification',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('kept_contract', False), ('score__isnull', True)), models.Q(('kept_contract', True), ('score__isnull', False)), _connector='OR'), name='meta_verification_score_iff_contract', violation_error_message='A meta-verification has a rating exactly when it kept the output contract.'),
        ),
    ]
