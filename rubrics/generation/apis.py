"""API of scheme generation (admins, by token): start a run over problems, read its status."""

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import RunStatusOutput
from core.roles import Role, api_permission
from core.values import ID_MAX
from problems.models import Problem
from rubrics import generation
from rubrics.generation import selectors as generation_selectors
from rubrics.models import GENERATION_METHODS, GeneratorConfig, LLMEndpoint

AdminOnly = api_permission(Role.ADMIN)


class GenerationRunCreateInput(serializers.Serializer):
    problems = serializers.ListField(
        child=serializers.CharField(), allow_empty=False, help_text="Problem external ids."
    )
    config = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=ID_MAX,
        help_text="An existing configuration (frozen ones keep their model).",
    )
    method = serializers.ChoiceField(choices=GENERATION_METHODS, required=False)
    prompt_version = serializers.CharField(required=False, default="v1")
    endpoint = serializers.CharField(required=False, help_text="Endpoint name.")
    reuse_steps = serializers.BooleanField(required=False, default=True)

    def validate(self, data):
        if "config" not in data and not (data.get("method") and data.get("endpoint")):
            raise serializers.ValidationError("Give a config id, or a method and an endpoint name.")
        return data


class GenerationTaskOutput(serializers.Serializer):
    id = serializers.IntegerField()
    problem = serializers.CharField(source="problem.external_id")
    status = serializers.CharField()
    attempts = serializers.IntegerField()
    error = serializers.CharField()
    scheme_id = serializers.IntegerField(allow_null=True)
    scheme_version = serializers.IntegerField(source="scheme.version", allow_null=True)


class GenerationRunOutput(RunStatusOutput):
    id = serializers.IntegerField()
    config = serializers.IntegerField(source="config_id")
    config_frozen = serializers.BooleanField(source="config.is_frozen")
    method = serializers.CharField()
    prompt_version = serializers.CharField()
    model = serializers.CharField(source="parameters.model")
    finished = serializers.BooleanField()
    done = serializers.IntegerField(source="done_count")
    failed = serializers.IntegerField(source="failed_count")
    tasks = GenerationTaskOutput(many=True, source="tasks_list")


def _run_payload(run_id: int) -> dict:
    run = generation_selectors.generation_run_detail(run_id=run_id)
    run.tasks_list = list(generation_selectors.generation_run_tasks(run=run))
    return GenerationRunOutput(run).data


class GenerationRunCreateApi(APIView):
    permission_classes = [AdminOnly]

    @extend_schema(
        tags=["schemes"],
        request=GenerationRunCreateInput,
        responses={201: GenerationRunOutput},
        summary="Start generating marking schemes for problems (one job per problem)",
    )
    def post(self, request):
        payload = GenerationRunCreateInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        wanted = list(dict.fromkeys(data["problems"]))
        problems = list(Problem.objects.filter(external_id__in=wanted).only("id", "external_id"))
        unknown = sorted(set(wanted) - {p.external_id for p in problems})
        if unknown:
            raise ApiValidationError({"problems": [f"Unknown problem(s): {', '.join(unknown)}."]})
        try:
            if "config" in data:
                config = GeneratorConfig.objects.filter(pk=data["config"]).first()
                if config is None:
                    raise ApiValidationError({"config": [f"No configuration {data['config']}."]})
            else:
                endpoint = LLMEndpoint.objects.filter(name=data["endpoint"]).first()
                if endpoint is None:
                    raise ApiValidationError(
                        {"endpoint": [f"No endpoint named {data['endpoint']!r}."]}
                    )
                config = generation.generator_config_get_or_create(
                    method=data["method"],
                    prompt_version=data["prompt_version"],
                    endpoint=endpoint,
                    user=request.user,
                )
            run = generation.generation_run_start(
                config=config,
                problems=problems,
                user=request.user,
                reuse_steps=data["reuse_steps"],
            )
        except ValidationError as exc:
            raise ApiValidationError(
                exc.message_dict if hasattr(exc, "error_dict") else exc.messages
            ) from exc
        return Response(_run_payload(run.pk), status=status.HTTP_201_CREATED)


class GenerationRunDetailApi(APIView):
    permission_classes = [AdminOnly]

    @extend_schema(
        tags=["schemes"],
        responses={200: GenerationRunOutput},
        summary="A generation run's status, progress and per-problem results",
    )
    def get(self, request, run_id: int):
        return Response(_run_payload(run_id))
