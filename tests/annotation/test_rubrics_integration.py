"""Campaigns and grades meet the rubrics app: a campaign's generator configuration (frozen when
chosen, shown on the dashboard, checked when items are created) and scheme versions frozen by
the first grade pointing at them."""

import pytest
from django.db import transaction
from django.urls import reverse

from annotation import selectors, services
from annotation.models import Campaign, Item
from rubrics.models import GeneratorConfig, MarkingScheme, SchemeStatus
from rubrics.services import scheme_approve, scheme_edit, scheme_version_create
from tests.annotation.factories import (
    SCHEME_TEXT,
    CampaignFactory,
    ItemFactory,
    created_items,
    expert_in,
)
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
        data=services.GradeInput.from_data(
            {"score": score, "awards": {"c1": "2", "c2": "3"}, "score_note": "judged so"}
        ),
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
    assert result.created_count == 4
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
    (first,) = created_items(
        services.items_create_from_selection(
            campaign=campaign, proofs=[ProofFactory(problem=problem)]
        )
    )
    submit(Item.objects.get(pk=first.pk), expert_in(campaign))
    scheme.refresh_from_db()
    assert scheme.status == SchemeStatus.FROZEN
    later = services.items_create_from_selection(
        campaign=campaign, proofs=[ProofFactory(problem=problem)]
    )
    assert created_items(later)[0].scheme_id == scheme.pk and later.without_scheme == []
    newer = scheme_approve(
        scheme=scheme_edit(scheme=scheme, text=SCHEME_TEXT + "\n", user=admin_user),
        user=admin_user,
    )
    scheme.refresh_from_db()
    assert scheme.status == SchemeStatus.FROZEN and newer.status == SchemeStatus.APPROVED
    newest = services.items_create_from_selection(
        campaign=campaign, proofs=[ProofFactory(problem=problem)]
    )
    assert created_items(newest)[0].scheme_id == newer.pk
    assert Item.objects.get(pk=first.pk).scheme_id == scheme.pk


def _items(campaign, problem, count):
    return created_items(
        services.items_create_from_selection(
            campaign=campaign, proofs=[ProofFactory(problem=problem) for _ in range(count)]
        )
    )


def test_approving_a_version_repins_the_items_waiting_for_it(admin_user):
    problem = ProblemFactory(external_id="REPIN-1")
    old = manual_scheme(problem, approver=admin_user)
    campaign = CampaignFactory()
    graded, waiting, drafted = _items(campaign, problem, 3)
    closed = CampaignFactory()
    (in_closed,) = _items(closed, problem, 1)
    closed = services.campaign_close(campaign=closed)
    other = _items(campaign, ProblemFactory(external_id="REPIN-2"), 1)[0]
    submit(Item.objects.get(pk=graded.pk), expert_in(campaign))
    expert = expert_in(campaign)
    services.assignment_create_manual(item=drafted, expert=expert, assigned_by=None)
    services.grade_save_draft(
        item=drafted, expert=expert, data=services.GradeInput.from_data({"score": "3"})
    )

    newer = scheme_approve(
        scheme=scheme_edit(scheme=old, text=SCHEME_TEXT + "\n", user=admin_user),
        user=admin_user,
    )

    assert newer.repinned_items == 2
    pinned = dict(Item.objects.values_list("pk", "scheme_id"))
    assert pinned[waiting.pk] == pinned[drafted.pk] == newer.pk
    assert pinned[graded.pk] == pinned[in_closed.pk] == old.pk
    assert pinned[other.pk] is None
    # the graded item keeps the version its grade was made under; both versions stay
    old.refresh_from_db()
    assert old.status == SchemeStatus.FROZEN and newer.status == SchemeStatus.APPROVED
    assert graded.grades.get().scheme_id == old.pk
    # approving the approved version again moves nothing
    assert scheme_approve(scheme=newer, user=admin_user).repinned_items == 0

    (row,) = selectors.items_on_older_schemes(campaign)
    assert (row.item_id, row.pinned, row.current) == (graded.pk, old.version, newer.version)
    assert row.reason.startswith(f"graded under v{old.version} (1 submitted grade)")
    (closed_row,) = selectors.items_on_older_schemes(closed)
    assert "the campaign is closed" in closed_row.reason


def test_the_first_approved_version_reaches_items_pinned_to_none(admin_user):
    problem = ProblemFactory(external_id="REPIN-3")
    campaign = CampaignFactory()
    (item,) = _items(campaign, problem, 1)
    assert item.scheme_id is None
    draft = scheme_version_create(problem=problem, text=SCHEME_TEXT, method="manual")
    assert scheme_approve(scheme=draft, user=admin_user).repinned_items == 1
    assert Item.objects.get(pk=item.pk).scheme_id == draft.pk
    assert selectors.items_on_older_schemes(campaign) == []
    # the grade is made under the version the item now uses, which freezes it
    grade = submit(Item.objects.get(pk=item.pk), expert_in(campaign))
    draft.refresh_from_db()
    assert grade.scheme_id == draft.pk and draft.status == SchemeStatus.FROZEN


def test_a_draft_saved_under_the_old_version_is_told_it_moved(client, admin_user):
    problem = ProblemFactory(external_id="REPIN-4")
    old = manual_scheme(problem, approver=admin_user)
    campaign = CampaignFactory()
    (item,) = _items(campaign, problem, 1)
    expert = expert_in(campaign)
    services.assignment_create_manual(item=item, expert=expert, assigned_by=None)
    services.grade_save_draft(
        item=item, expert=expert, data=services.GradeInput.from_data({"score": "3"})
    )
    page = reverse("annotation:item", args=[item.pk])
    client.force_login(expert)
    assert 'id="scheme-moved"' not in client.get(page).content.decode()
    newer = scheme_approve(
        scheme=scheme_edit(scheme=old, text=SCHEME_TEXT + "\n", user=admin_user),
        user=admin_user,
    )
    body = client.get(page).content.decode()
    assert f"now uses marking scheme version {newer.version}" in body


def test_approval_says_how_many_items_moved_and_the_dashboard_why_others_stay(client, admin_user):
    problem = ProblemFactory(external_id="REPIN-5")
    old = manual_scheme(problem, approver=admin_user)
    campaign = CampaignFactory()
    graded, _ = _items(campaign, problem, 2)
    submit(Item.objects.get(pk=graded.pk), expert_in(campaign))
    newer = scheme_edit(scheme=old, text=SCHEME_TEXT + "\n", user=admin_user)
    client.force_login(admin_user)
    response = client.post(reverse("rubrics:approve", args=[newer.pk]), follow=True)
    assert "1 item of open campaigns waiting for a grade now uses it" in response.content.decode()
    body = client.get(reverse("annotation:campaign", args=[campaign.slug])).content.decode()
    section = body[body.index('id="older-pins"') :]
    assert f">{graded.pk}</a>" in section and f"graded under v{old.version}" in section


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
