"""Campaigns and their members."""

from __future__ import annotations

import re
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import slugify

from annotation import scales
from annotation.models import (
    Campaign,
    CampaignMember,
    CampaignStatus,
    DoubleDesign,
    LabelPolicy,
    MemberRole,
    Scale,
    SecondOpinionSource,
    TaskKind,
    default_error_taxonomy,
)
from annotation.signals import expert_added
from rubrics.generation import generator_config_freeze

KEY_RE = re.compile(r"^[a-z0-9_]+$")


class CampaignError(ValueError):
    """Campaign settings that do not make sense; the message names the field."""


def taxonomy_from_text(text: str) -> list[dict]:
    """The error taxonomy from lines `key: Label` (or just `Label`, keyed by its slug)."""
    entries: list[dict] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if ":" in line:
            key, label = (part.strip() for part in line.split(":", 1))
        else:
            key, label = slugify(line).replace("-", "_"), line
        if not KEY_RE.match(key) or not label:
            raise CampaignError(
                f"error taxonomy, line {number}: write 'key: Label' with a key of lower-case "
                "letters, digits and underscores"
            )
        entries.append({"key": key, "label": label})
    return entries


def taxonomy_to_text(taxonomy: list[dict]) -> str:
    return "\n".join(f"{entry['key']}: {entry['label']}" for entry in taxonomy)


def _check(campaign: Campaign) -> None:
    try:
        spec = scales.scale_spec(campaign.scale)
    except scales.ScaleError as exc:
        raise CampaignError(f"scale: {exc}") from None
    if not Decimal(0) <= Decimal(campaign.tolerance) <= spec.max - spec.min:
        raise CampaignError(
            f"tolerance: give a number from 0 to {scales.shown(spec.max - spec.min)} (the range "
            f"of the {spec.name} scale)"
        )
    if campaign.task_kind not in TaskKind.values:
        raise CampaignError(f"task_kind: {campaign.task_kind!r} is not known")
    if campaign.task_kind == TaskKind.ANALYSIS_REVIEW and campaign.scale != Scale.TERNARY:
        raise CampaignError("scale: an analysis review campaign rates analyses on 0 / 0.5 / 1")
    if campaign.label_policy not in LabelPolicy.values:
        raise CampaignError(f"label_policy: {campaign.label_policy!r} is not known")
    if not Decimal(0) <= Decimal(campaign.double_share) <= Decimal(1):
        raise CampaignError("double_share: give a share between 0 and 1 (0.4 = 40%)")
    if campaign.double_design not in DoubleDesign.values:
        raise CampaignError(f"double_design: {campaign.double_design!r} is not known")
    if not Decimal(0) < Decimal(campaign.double_uniform_share) <= Decimal(1):
        raise CampaignError(
            "double_uniform_share: give a share above 0 and at most 1 (0.3 = 30%): adaptive "
            "double-scoring keeps a uniform part"
        )
    if not Decimal(0) <= Decimal(campaign.gold_rate) <= Decimal(1):
        raise CampaignError("gold_rate: give a share between 0 and 1")
    if campaign.second_opinion not in SecondOpinionSource.values:
        raise CampaignError(f"second_opinion: {campaign.second_opinion!r} is not known")
    if campaign.second_opinion and campaign.task_kind != TaskKind.PROOF_GRADING:
        raise CampaignError("second_opinion: only proof grading campaigns reveal one")
    keys = [entry.get("key") for entry in campaign.error_taxonomy]
    if len(keys) != len(set(keys)) or not all(isinstance(k, str) and k for k in keys):
        raise CampaignError("error_taxonomy: every category needs a distinct key")


CAMPAIGN_FIELDS = (
    "name",
    "slug",
    "task_kind",
    "scale",
    "double_share",
    "double_design",
    "double_uniform_share",
    "sample_seed",
    "tolerance",
    "label_policy",
    "error_taxonomy",
    "guidelines",
    "status",
    "lease_minutes",
    "gold_rate",
    "fast_seconds",
    "generator_config",
    "second_opinion",
    "second_opinion_from",
    "is_calibration",
)


def _freeze_generator_config(campaign: Campaign, user: AbstractBaseUser | None) -> None:
    """Freezes the campaign's generator configuration if it is not frozen yet, so that all
    later schemes for the campaign come from the same one."""
    config = campaign.generator_config
    if config is None or config.is_frozen:
        return
    try:
        campaign.generator_config = generator_config_freeze(config=config, user=user)
    except ValidationError as exc:
        raise CampaignError(f"generator_config: {' '.join(exc.messages)}") from exc


@transaction.atomic
def campaign_create(
    *, name: str, created_by: AbstractBaseUser | None, slug: str = "", **fields
) -> Campaign:
    """A new campaign; unknown settings are refused by name; the creator becomes its admin."""
    unknown = set(fields) - set(CAMPAIGN_FIELDS)
    if unknown:
        raise CampaignError(f"unknown campaign field(s): {', '.join(sorted(unknown))}")
    if not fields.get("error_taxonomy"):
        fields["error_taxonomy"] = default_error_taxonomy()
    campaign = Campaign(name=name, slug=slug or slugify(name)[:80], created_by=created_by, **fields)
    if not campaign.slug:
        raise CampaignError("slug: the name gives no usable slug; give one")
    if Campaign.objects.filter(slug=campaign.slug).exists():
        raise CampaignError(f"slug: a campaign called {campaign.slug!r} exists already")
    _check(campaign)
    _freeze_generator_config(campaign, created_by)
    campaign.save()
    if created_by is not None:
        CampaignMember.objects.create(campaign=campaign, user=created_by, role=MemberRole.ADMIN)
    return campaign


@transaction.atomic
def campaign_update(
    *, campaign: Campaign, updated_by: AbstractBaseUser | None = None, **fields
) -> Campaign:
    """Changes the campaign's settings; its generator configuration is frozen (by
    `updated_by`) if it is not frozen yet."""
    unknown = set(fields) - set(CAMPAIGN_FIELDS)
    if unknown:
        raise CampaignError(f"unknown campaign field(s): {', '.join(sorted(unknown))}")
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    for key, value in fields.items():
        setattr(campaign, key, value)
    _check(campaign)
    _freeze_generator_config(campaign, updated_by)
    if Campaign.objects.filter(slug=campaign.slug).exclude(pk=campaign.pk).exists():
        raise CampaignError(f"slug: a campaign called {campaign.slug!r} exists already")
    campaign.save()
    return campaign


@transaction.atomic
def campaign_close(*, campaign: Campaign) -> Campaign:
    return campaign_update(campaign=campaign, status=CampaignStatus.CLOSED)


@transaction.atomic
def campaign_member_add(
    *, campaign: Campaign, user: AbstractBaseUser, role: str = MemberRole.EXPERT
) -> CampaignMember:
    if role not in MemberRole.values:
        raise CampaignError(f"role: {role!r} is not one of {', '.join(MemberRole.values)}")
    member, _ = CampaignMember.objects.get_or_create(campaign=campaign, user=user, role=role)
    if role == MemberRole.EXPERT:
        expert_added.send(sender=CampaignMember, campaign_id=campaign.pk, user_id=user.pk)
    return member


@transaction.atomic
def campaign_member_remove(*, member: CampaignMember) -> None:
    member.delete()
