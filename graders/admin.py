from django.contrib import admin

from graders.models import GraderEvaluation


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
