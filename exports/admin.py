from django.contrib import admin

from exports.models import ExportJob


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
