"""The calibration gate's tables moved from annotation to calibration (calibration 0003,
annotation 0010) with their rows: migrate back to before the move, write a requirement, a pass
and a retake there, migrate forwards, and read them through today's models (both databases)."""

from decimal import Decimal

from calibration.models import CalibrationPass, CalibrationRequirement, CalibrationRetake

BEFORE = [("annotation", "0009_grade_version"), ("calibration", "0002_expert_retakes")]


def test_the_gate_keeps_its_rows_when_it_moves_to_calibration(migrations):
    old = migrations.migrate(BEFORE).loader.project_state(BEFORE).apps
    user = old.get_model("auth", "User").objects.create(username="ada")
    campaign_model = old.get_model("annotation", "Campaign")
    campaign = campaign_model.objects.create(slug="main", name="Main")
    round = campaign_model.objects.create(slug="round", name="Round", is_calibration=True)
    requirement = old.get_model("annotation", "CalibrationRequirement").objects.create(
        campaign=campaign, round=round, max_mae=Decimal("0.5"), min_items=2
    )
    old.get_model("annotation", "CalibrationPass").objects.create(
        requirement=requirement, expert=user, items=3, mae=Decimal("0.250")
    )
    old.get_model("calibration", "CalibrationRetake").objects.create(
        requirement=requirement, expert=user, round=round, replaces=round
    )

    migrations.migrate()

    moved = CalibrationRequirement.objects.get(pk=requirement.pk)
    assert (moved.campaign.slug, moved.round.slug, moved.min_items) == ("main", "round", 2)
    assert moved.passes.get().mae == Decimal("0.250")
    assert CalibrationRetake.objects.get().requirement == moved
    assert CalibrationRequirement._meta.db_table == "calibration_calibrationrequirement"
    moved.delete()  # with its pass and retake
    assert not CalibrationPass.objects.exists() and not CalibrationRetake.objects.exists()
    again = CalibrationRequirement.objects.create(campaign_id=campaign.pk, round_id=round.pk)
    assert again.pk > requirement.pk  # the renamed table's id sequence goes on
