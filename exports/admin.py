from django.contrib import admin

from exports.models import ExportJob, GraderEvaluation


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "campaign",
        "format",
        "file_type",
        "status",
        "processed",
        "size",
        "created_by",
        "created_at",
    ]
    list_filter = ["status", "format", "file_type"]
    readonly_fields = [
        "file",
        "size",
        "sha256",
        "manifest",
        "error",
        "started_at",
        "finished_at",
        "heartbeat_at",
        "attempts",
    ]


@admin.register(GraderEvaluation)
class GraderEvaluationAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "name",
        "campaign",
        "source",
        "runs",
        "aggregation",
        "status",
        "created_at",
    ]
    list_filter = ["status", "source"]
    readonly_fields = ["report", "counts", "parameters", "error"]
