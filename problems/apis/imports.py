"""Import endpoints (admins, by token): upload a corpus file as a job, then read the job.

`POST /api/v1/imports/` (multipart: file, format, dry_run, licence) answers 202 with the job id and the
URL to poll; `GET /api/v1/imports/<id>/` gives status, progress, counts and the per-line report.
"""

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.roles import Role, api_permission
from problems import selectors
from problems.forms import LICENCE_HELP, SKIP_UNSTORABLE_HELP, check_upload, sniff_upload
from problems.importers import FORMATS
from problems.services import import_job_create

Importer = api_permission(Role.ADMIN)


class ImportJobOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    original_name = serializers.CharField()
    format = serializers.CharField()
    dry_run = serializers.BooleanField()
    licence = serializers.CharField(help_text="Of the whole source; blank: the format's default.")
    processed = serializers.IntegerField(help_text="Bytes read so far.")
    total = serializers.IntegerField(allow_null=True, help_text="Bytes in the upload.")
    counts = serializers.JSONField(help_text="created / updated / unchanged per model.")
    report = serializers.JSONField(help_text="Errors and warnings: level, file, line, field.")
    error = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class ImportCreateOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    status_url = serializers.URLField()


class ImportCreateInput(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(
        choices=[("", "detect"), *[(f, f) for f in FORMATS]], required=False, default=""
    )
    dry_run = serializers.BooleanField(required=False, default=False)
    skip_unstorable = serializers.BooleanField(
        required=False, default=False, help_text=SKIP_UNSTORABLE_HELP
    )
    licence = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text=LICENCE_HELP,
    )

    def validate_file(self, upload):
        problems = check_upload(upload)
        if problems:
            raise serializers.ValidationError(problems)
        return upload

    def validate(self, data):
        problems = sniff_upload(
            data["file"], data["format"], skip_unstorable=data["skip_unstorable"]
        )
        if problems:
            raise serializers.ValidationError({"file": problems})
        return data


class ImportCreateApi(APIView):
    permission_classes = [Importer]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=["import"],
        operation_id="imports_create",
        request={"multipart/form-data": ImportCreateInput},
        responses={202: ImportCreateOutput},
    )
    def post(self, request):
        data = ImportCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        job = import_job_create(
            upload=data.validated_data["file"],
            fmt=data.validated_data["format"],
            dry_run=data.validated_data["dry_run"],
            licence=data.validated_data["licence"],
            created_by=request.user,
        )
        url = request.build_absolute_uri(reverse("api-import-detail", args=[job.pk]))
        return Response(
            ImportCreateOutput({"id": job.pk, "status": job.status, "status_url": url}).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": url},
        )


class ImportDetailApi(APIView):
    permission_classes = [Importer]

    @extend_schema(tags=["import"], operation_id="imports_retrieve", responses=ImportJobOutput)
    def get(self, request, job_id: int):
        job = selectors.import_job_detail(job_id=job_id)
        return Response(ImportJobOutput(job).data)
