"""Exports API: create an export, read its status, download its files (researchers and admins)."""

from django.http import FileResponse, Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Campaign
from core.roles import Role, api_permission
from exports import selectors
from exports.formats import FORMATS, ExportError
from exports.models import ExportJob, FileType, Layout
from exports.services import export_create, export_file_open
from jobs.models import JobStatus

Readers = api_permission(Role.ADMIN, Role.RESEARCHER)


class ExportJobOutput(serializers.ModelSerializer):
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", default=None)
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = ExportJob
        fields = [
            "id",
            "campaign",
            "format",
            "file_type",
            "layout",
            "filters",
            "status",
            "processed",
            "total",
            "size",
            "sha256",
            "manifest",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "download_url",
        ]

    def get_download_url(self, job: ExportJob) -> str | None:
        if job.status != JobStatus.SUCCEEDED:
            return None
        return self.context["request"].build_absolute_uri(f"/api/v1/exports/{job.pk}/download/")


class ExportCreateInput(serializers.Serializer):
    campaign = serializers.SlugRelatedField(slug_field="slug", queryset=Campaign.objects.all())
    format = serializers.ChoiceField(choices=FORMATS)
    file_type = serializers.ChoiceField(choices=FileType.values)
    filters = serializers.DictField(required=False, default=dict)
    layout = serializers.ChoiceField(
        choices=Layout.choices,
        required=False,
        default=Layout.FILE,
        help_text="hf: also a Hugging Face dataset folder (download part `hf`, a .zip); file "
        "type jsonl or parquet.",
    )


class ExportCreateApi(APIView):
    permission_classes = [Readers]

    @extend_schema(request=ExportCreateInput, responses={201: ExportJobOutput}, tags=["exports"])
    def post(self, request):
        data = ExportCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            job = export_create(
                user=request.user,
                campaign=data.validated_data["campaign"],
                fmt=data.validated_data["format"],
                file_type=data.validated_data["file_type"],
                filters=data.validated_data["filters"],
                layout=data.validated_data["layout"],
            )
        except ExportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        body = ExportJobOutput(job, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)


class ExportDetailApi(APIView):
    permission_classes = [Readers]

    @extend_schema(responses=ExportJobOutput, tags=["exports"])
    def get(self, request, job_id: int):
        job = selectors.export_job_for_user(request.user, job_id)
        return Response(ExportJobOutput(job, context={"request": request}).data)


class ExportDownloadApi(APIView):
    permission_classes = [Readers]

    @extend_schema(
        responses={(200, "application/octet-stream"): bytes},
        tags=["exports"],
        description="The data file; `?part=manifest`, `?part=card`, `?part=pictures` (a .zip of "
        "the pictures its texts refer to, when there are any) or `?part=checkpoints` (the "
        "checkpoint figures, where the grades used a scheme) or `?part=hf` (the Hugging Face "
        "dataset folder as a .zip, for an export with layout hf) for the others.",
    )
    def get(self, request, job_id: int):
        job = selectors.export_job_for_user(request.user, job_id)
        part = request.query_params.get("part", "data")
        try:
            handle, name = export_file_open(job, part)
        except ExportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except KeyError as exc:
            raise Http404("part is data, manifest, card, pictures, checkpoints or hf") from exc
        except FileNotFoundError as exc:
            raise Http404("the file is no longer on the server") from exc
        return FileResponse(handle, as_attachment=True, filename=name)
