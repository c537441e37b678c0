from django.contrib import admin

from annotation.models import (
    Assignment,
    Campaign,
    CampaignMember,
    ErrorSpan,
    Grade,
    GradeRevision,
    Item,
)
from core.visibility import BlindAdminMixin


class MemberInline(admin.TabularInline):
    model = CampaignMember
    extra = 0
    raw_id_fields = ["user"]


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "scale", "task_kind", "status", "double_share", "created_at"]
    list_filter = ["status", "scale", "task_kind"]
    search_fields = ["name", "slug"]
    inlines = [MemberInline]


@admin.register(Item)
class ItemAdmin(BlindAdminMixin, admin.ModelAdmin):
    blind_proof_path = "proof"
    list_display = ["id", "campaign", "proof", "scheme", "required_judgements", "submitted_count"]
    list_filter = ["campaign", "is_gold", "is_final"]
    raw_id_fields = ["proof", "analysis", "scheme"]
    list_select_related = ["campaign", "proof", "scheme"]


@admin.register(Assignment)
class AssignmentAdmin(BlindAdminMixin, admin.ModelAdmin):
    blind_proof_path = "item__proof"
    list_display = ["id", "item", "expert", "status", "leased_until", "assigned_by"]
    list_filter = ["status"]
    raw_id_fields = ["item", "expert", "assigned_by"]


class SpanInline(admin.TabularInline):
    model = ErrorSpan
    extra = 0


class RevisionInline(admin.TabularInline):
    model = GradeRevision
    extra = 0
    readonly_fields = ["changed_by", "changed_at", "old", "new"]


@admin.register(Grade)
class GradeAdmin(BlindAdminMixin, admin.ModelAdmin):
    blind_proof_path = "item__proof"
    list_display = ["id", "item", "expert", "status", "score", "computed_score", "submitted_at"]
    list_filter = ["status"]
    raw_id_fields = ["item", "expert", "scheme"]
    inlines = [SpanInline, RevisionInline]
