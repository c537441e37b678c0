"""Campaigns and grades meet the rubrics app: a campaign's generator configuration (frozen when
chosen, shown on the dashboard, checked when items are created) and scheme versions frozen by
the first grade pointing at them."""

import pytest
from django.db import transaction
from django.urls import reverse

from annotation import services
from annotation.models import Campaign, Item
from rubrics.models import GeneratorConfig, MarkingScheme, SchemeStatus
from rubrics.services import scheme_approve, scheme_edit, scheme_version_create
from tests.annotation.factories import SCHEME_TEXT, CampaignFactory, ItemFactory, expert_in
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ProofFactory
from tests.rubrics.generation_factories import GeneratorConfigFactory

pytestmark = pytest.mark.django_db


def generated_scheme(problem, config, *, approver) -> MarkingScheme:
    """An approved version whose provenance names `config` as rubrics.generation writes it."""
    scheme = scheme_version_create(
        problem=problem,
        text=SCHEME_TEXT,
        method=config.method,
        provenance={
            "generator": "proofmark",
            "config": {"id": config.pk, "name": config.name, "frozen": config.is_frozen},
            "prompt_version": config.prompt_version,
        },
    )
    return scheme_approve(scheme=scheme, user=approver)


def manual_scheme(problem, *, approver) -> MarkingScheme:
    scheme = scheme_version_create(problem=problem, text=SCHEME_TEXT, method="manual")
    return scheme_approve(scheme=scheme, user=approver)


def submit(item, expert, score="5"):
    services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    return services.grade_submit(
        item=item,
        expert=expert,
        data=services.GradeInput.from_data({"score": score, "awards": {"c1": "2", "c2": "3"}}),
    )


# --- the campaign's generator configuration -------------------------------------------------


def test_choosing_a_configuration_freezes_it_once(admin_user):
    config = GeneratorConfigFactory()
    assert not config.is_frozen
    campaign = services.campaign_create(
        name="Frozen run", created_by=admin_user, generator_config=config
    )
    config.refresh_from_db()
    assert campaign.generator_config == config
    assert config.is_frozen and config.frozen_by == admin_user
    assert config.frozen_parameters["model"] == config.endpoint.model
    frozen_at = config.frozen_at
    other = services.campaign_create(name="Same config", created_by=None, generator_config=config)
    config.refresh_from_db()
    assert other.generator_config == config and config.frozen_at == frozen_at


def test_update_freezes_a_newly_chosen_configuration_by_the_editor(admin_user):
    campaign = CampaignFactory()
    editor = UserFactory(roles=["admin"])
    config = GeneratorConfigFactory()
    services.campaign_update(campaign=campaign, updated_by=editor, generator_config=config)
    config.refresh_from_db()
    assert config.is_frozen and config.frozen_by == editor
    assert Campaign.objects.get(pk=campaign.pk).generator_config_id == config.pk
    services.campaign_update(campaign=campaign, updated_by=editor, generator_config=None)
    assert Campaign.objects.get(pk=campaign.pk).generator_config_id is None


def test_items_warn_about_schemes_not_from_the_campaign_configuration(admin_user):
    config = GeneratorConfigFactory(name="pb v1 on fake")
    other_config = GeneratorConfigFactory()
    campaign = services.campaign_create(
        name="Configured", created_by=admin_user, generator_config=config
    )
    same = ProblemFactory(external_id="CFG-SAME")
    generated_scheme(same, GeneratorConfig.objects.get(pk=config.pk), approver=admin_user)
    other = ProblemFactory(external_id="CFG-OTHER")
    generated_scheme(other, other_config, approver=admin_user)
    manual = ProblemFactory(external_id="CFG-MANUAL")
    manual_scheme(manual, approver=admin_user)
    bare = ProblemFactory(external_id="CFG-NONE")
    proofs = [ProofFactory(problem=p) for p in (same, other, manual, bare)]
    result = services.items_create_from_selection(campaign=campaign, proofs=proofs)
    assert len(result.created) == 4
    assert sorted(result.not_from_config) == ["CFG-MANUAL", "CFG-OTHER"]
    summary = result.summary()
    assert "not generated with “pb v1 on fake” for CFG-MANUAL, CFG-OTHER." in summary
    assert "CFG-SAME" not in summary and "for CFG-NONE" in summary


def test_items_of_a_campaign_without_configuration_give_no_warning(admin_user):
    campaign = CampaignFactory()
    problem = ProblemFactory(external_id="NOCFG-1")
    manual_scheme(problem, approver=admin_user)
    result = services.items_create_from_selection(
        campaign=campaign, proofs=[ProofFactory(problem=problem)]
    )
    assert result.not_from_config == [] and "warning" not in result.summary()


# --- the first grade freezes the scheme version ---------------------------------------------


def test_first_submitted_grade_freezes_the_approved_version(admin_user):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign, required_judgements=2)
    scheme = item.scheme
    assert scheme.status == SchemeStatus.APPROVED
    first, second = expert_in(campaign), expert_in(campaign)
    grade = submit(item, first)
    scheme.refresh_from_db()
    assert grade.scheme_id == scheme.pk and scheme.status == SchemeStatus.FROZEN
    submit(item, second, score="4")
    scheme.refresh_from_db()
    assert scheme.status == SchemeStatus.FROZEN


def test_saving_a_draft_grade_does_not_freeze_the_version():
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    services.grade_save_draft(
        item=item, expert=expert, data=services.GradeInput.from_data({"score": "3"})
    )
    item.scheme.refresh_from_db()
    assert item.scheme.status == SchemeStatus.APPROVED


def test_freezing_rolls_back_with_the_grade(admin_user):
    campaign = CampaignFactory()
    item = ItemFactory(campaign=campaign)
    expert = expert_in(campaign)
    with pytest.raises(RuntimeError), transaction.atomic():
        submit(item, expert)
        assert MarkingScheme.objects.get(pk=item.scheme_id).status == SchemeStatus.FROZEN
        raise RuntimeError("the submission's transaction fails after the grade")
    assert MarkingScheme.objects.get(pk=item.scheme_id).status == SchemeStatus.APPROVED


def test_later_items_pin_the_frozen_version_until_a_new_one_is_approved(admin_user):
    campaign = CampaignFactory()
    problem = ProblemFactory(external_id="FRZ-1")
    scheme = manual_scheme(problem, approver=admin_user)
    first = services.items_create_from_selection(
        campaign=campaign, proofs=[ProofFactory(problem=problem)]
    ).created[0]
    submit(Item.objects.get(pk=first.pk), expert_in(campaign))
    scheme.refresh_from_db()
    assert scheme.status == SchemeStatus.FROZEN
    later = services.items_create_from_selection(
        campaign=campaign, proofs=[ProofFactory(problem=problem)]
    )
    assert later.created[0].scheme_id == scheme.pk and later.without_scheme == []
    newer = scheme_approve(
        scheme=scheme_edit(scheme=scheme, text=SCHEME_TEXT + "\n", user=admin_user),
        user=admin_user,
    )
    scheme.refresh_from_db()
    assert scheme.status == SchemeStatus.FROZEN and newer.status == SchemeStatus.APPROVED
    newest = services.items_create_from_selection(
        campaign=campaign, proofs=[ProofFactory(problem=problem)]
    )
    assert newest.created[0].scheme_id == newer.pk
    assert Item.objects.get(pk=first.pk).scheme_id == scheme.pk


def test_grading_an_item_whose_version_lost_its_approval_keeps_it_a_draft(admin_user):
    campaign = CampaignFactory()
    problem = ProblemFactory(external_id="MOVED-1")
    scheme = manual_scheme(problem, approver=admin_user)
    item = services.items_create_from_selection(
        campaign=campaign, proofs=[ProofFactory(problem=problem)]
    ).created[0]
    newer = scheme_edit(scheme=scheme, text=SCHEME_TEXT + "\n", user=admin_user)
    scheme_approve(scheme=newer, user=admin_user)
    grade = submit(Item.objects.get(pk=item.pk), expert_in(campaign))
    scheme.refresh_from_db()
    assert grade.is_submitted and grade.scheme_id == scheme.pk
    assert scheme.status == SchemeStatus.DRAFT


# --- pages ----------------------------------------------------------------------------------


CAMPAIGN_POST = {
    "task_kind": "proof_grading",
    "scale": "0-7",
    "double_share": "0.4",
    "sample_seed": "1",
    "tolerance": "1",
    "label_policy": "mean_floor",
    "lease_minutes": "60",
    "gold_rate": "0",
    "fast_seconds": "60",
    "error_taxonomy": "",
    "guidelines": "",
    "status": "open",
}


def test_admin_chooses_a_configuration_on_the_page_and_the_dashboard_shows_it(client, admin_user):
    config = GeneratorConfigFactory(name="refgrader v1 on local", method="refgrader")
    client.force_login(admin_user)
    form = client.get(reverse("annotation:campaign-create")).content.decode()
    assert 'name="generator_config"' in form and "refgrader v1 on local" in form
    response = client.post(
        reverse("annotation:campaign-create"),
        {**CAMPAIGN_POST, "name": "Config pilot", "generator_config": str(config.pk)},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    campaign = Campaign.objects.get(slug="config-pilot")
    config.refresh_from_db()
    assert campaign.generator_config_id == config.pk and config.frozen_by == admin_user
    dashboard = client.get(reverse("annotation:campaign", args=[campaign.slug])).content.decode()
    assert 'id="generator-config"' in dashboard
    assert "<strong>refgrader v1 on local</strong>" in dashboard and "frozen " in dashboard
    edit = client.get(reverse("annotation:campaign-edit", args=[campaign.slug])).content.decode()
    assert f'<option value="{config.pk}" selected>' in edit


def test_edit_page_freezes_the_chosen_configuration(client, admin_user):
    campaign = CampaignFactory(name="Edited", slug="edited")
    config = GeneratorConfigFactory()
    client.force_login(admin_user)
    response = client.post(
        reverse("annotation:campaign-edit", args=[campaign.slug]),
        {**CAMPAIGN_POST, "name": "Edited", "slug": "edited", "generator_config": str(config.pk)},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    config.refresh_from_db()
    assert config.is_frozen and config.frozen_by == admin_user
    unknown = client.post(
        reverse("annotation:campaign-edit", args=[campaign.slug]),
        {**CAMPAIGN_POST, "name": "Edited", "slug": "edited", "generator_config": "999999"},
    )
    assert unknown.status_code == 200 and "Select a valid choice" in unknown.content.decode()


def test_items_page_names_problems_off_the_configuration(client, admin_user):
    config = GeneratorConfigFactory(name="frozen-pb")
    campaign = services.campaign_create(
        name="Warned", created_by=admin_user, generator_config=config
    )
    off = ProblemFactory(contest="Warn Cup", external_id="WARN-OFF")
    manual_scheme(off, approver=admin_user)
    on = ProblemFactory(contest="Warn Cup", external_id="WARN-ON")
    generated_scheme(on, config, approver=admin_user)
    ProofFactory(problem=off)
    ProofFactory(problem=on)
    client.force_login(admin_user)
    response = client.post(
        reverse("annotation:items-create", args=[campaign.slug]),
        {"contest": "Warn Cup"},
        follow=True,
    )
    html = response.content.decode()
    assert "2 item(s) created" in html
    assert '<li class="warning">' in html
    assert "not generated with “frozen-pb” for WARN-OFF." in html
    assert Item.objects.filter(campaign=campaign).count() == 2
