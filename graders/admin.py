from django.contrib import admin

from graders.models import GraderEvaluation, PairwisePickRun


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


@admin.register(PairwisePickRun)
class PairwisePickRunAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "campaign", "endpoint", "source", "status", "created_at"]
    list_filter = ["status", "source"]
    readonly_fields = ["report", "parameters", "error"]
