from django.contrib import admin

from core.visibility import BlindAdminMixin
from problems.models import (
    ImportJob,
    Problem,
    ProblemStatement,
    Proof,
    ReferenceSolution,
    VerifierAnalysis,
)


@admin.register(Problem)
class ProblemAdmin(admin.ModelAdmin):
    list_display = [
        "external_id",
        "contest",
        "year",
        "number",
        "topic",
        "statement_version",
        "source",
    ]
    list_filter = ["contest", "year", "topic"]
    search_fields = ["external_id", "statement"]


@admin.register(ProblemStatement)
class ProblemStatementAdmin(admin.ModelAdmin):
    """Past statements are history: written by imports only."""

    list_display = ["problem", "version", "source", "replaced_by", "replaced_at"]
    list_select_related = ["problem"]
    search_fields = ["problem__external_id"]
    readonly_fields = ["problem", "version", "text", "source", "replaced_by", "replaced_at"]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(ReferenceSolution)
class ReferenceSolutionAdmin(admin.ModelAdmin):
    list_display = ["problem", "source", "cluster_label", "text_hash"]
    list_select_related = ["problem"]
    raw_id_fields = ["problem"]
    search_fields = ["problem__external_id"]


@admin.register(Proof)
class ProofAdmin(BlindAdminMixin, admin.ModelAdmin):
    blind_proof_path = "pk"
    list_display = ["problem", "generator", "sample_key", "source"]
    list_filter = ["generator", "source"]
    list_select_related = ["problem"]
    raw_id_fields = ["problem", "statement"]
    search_fields = ["problem__external_id", "generator"]


@admin.register(VerifierAnalysis)
class VerifierAnalysisAdmin(BlindAdminMixin, admin.ModelAdmin):
    blind_proof_path = "proof"
    list_display = ["proof", "verifier", "sample_key", "score", "kept_contract"]
    list_filter = ["verifier", "kept_contract", "score"]
    list_select_related = ["proof__problem"]
    raw_id_fields = ["proof"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "original_name",
        "format",
        "licence",
        "status",
        "processed",
        "created_by",
        "created_at",
    ]
    list_filter = ["status", "format"]
    readonly_fields = ["counts", "report", "error"]
