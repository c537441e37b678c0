"""Admin pages: language-model endpoints (the key itself is never stored: only the name of the
variable holding it), generator configurations (read-only once frozen), generation runs."""

from django.contrib import admin, messages

from .models import GenerationRun, GenerationStep, GenerationTask, GeneratorConfig, LLMEndpoint


@admin.register(LLMEndpoint)
class LLMEndpointAdmin(admin.ModelAdmin):
    list_display = ["name", "model", "base_url", "api_key_env", "key_set", "temperature"]
    search_fields = ["name", "model", "base_url"]
    fields = [
        "name",
        "base_url",
        "model",
        "api_key_env",
        "temperature",
        "max_tokens",
        "timeout_seconds",
        "concurrency",
        "max_attempts",
        "extra",
        "input_price_per_million",
        "output_price_per_million",
    ]

    actions = ["check_answers"]

    @admin.action(description="Check that the selected endpoints answer")
    def check_answers(self, request, queryset):
        # imported here and below: the admin's modules load in every process (Django's
        # autodiscover), the generation service and the model client only when an admin asks
        from llm.client import LLMError

        from .generation import llm_endpoint_check

        for endpoint in queryset:
            try:
                self.message_user(request, llm_endpoint_check(endpoint=endpoint), messages.SUCCESS)
            except LLMError as exc:
                self.message_user(request, f"{endpoint.name} did not answer: {exc}", messages.ERROR)

    @admin.display(boolean=True, description="Key set")
    def key_set(self, endpoint: LLMEndpoint) -> bool:
        from .workflows import endpoint_api_key

        return bool(endpoint_api_key(endpoint))


@admin.register(GeneratorConfig)
class GeneratorConfigAdmin(admin.ModelAdmin):
    list_display = ["name", "method", "prompt_version", "endpoint", "frozen_at", "frozen_by"]
    list_filter = ["method", "prompt_version"]
    list_select_related = ["endpoint", "frozen_by"]
    readonly_fields = ["frozen_at", "frozen_by", "frozen_parameters", "created_by", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.is_frozen:
            return [field.name for field in obj._meta.fields]
        return self.readonly_fields

    def has_delete_permission(self, request, obj=None) -> bool:
        return obj is None or not obj.is_frozen


class GenerationTaskInline(admin.TabularInline):
    model = GenerationTask
    fields = ["problem", "status", "attempts", "error", "scheme"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(GenerationRun)
class GenerationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "config", "status", "done_count", "failed_count", "total", "created_at"]
    list_filter = ["status", "method"]
    list_select_related = ["config"]
    readonly_fields = [field.name for field in GenerationRun._meta.fields]
    inlines = [GenerationTaskInline]


@admin.register(GenerationStep)
class GenerationStepAdmin(admin.ModelAdmin):
    list_display = ["problem", "step", "prompt", "model", "created_at"]
    list_filter = ["prompt", "model"]
    list_select_related = ["problem"]
    readonly_fields = [field.name for field in GenerationStep._meta.fields]
