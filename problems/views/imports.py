"""The import pages (admins): upload a corpus file, then watch its job (htmx polls the status
fragment until the job is done; the page survives a reload because the job row holds it all)."""

from django.conf import settings
from django.shortcuts import redirect, render

from core.broker import BrokerUnavailable
from core.http import page_or_fragment
from core.roles import Role, role_required
from core.workers import workers_alive
from problems import selectors
from problems.forms import FORMAT_LABELS, ImportUploadForm, megabytes
from problems.services import import_job_create


@role_required(Role.ADMIN)
def import_upload(request):
    limit = settings.PROOFMARK_MAX_UPLOAD_BYTES
    status, refused = 200, ""
    if request.method == "POST":
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
        if declared > limit + 1024 * 1024:
            form = ImportUploadForm()
            refused = (
                f"The upload is {megabytes(declared)}; the limit is {megabytes(limit)}. Import "
                "larger files with `manage.py import_corpus` on the server."
            )
            status = 413
        else:
            form = ImportUploadForm(request.POST, request.FILES)
            if form.is_valid():
                try:
                    job = import_job_create(
                        upload=form.cleaned_data["file"],
                        fmt=form.cleaned_data["format"],
                        dry_run=form.cleaned_data["dry_run"],
                        licence=form.cleaned_data["licence"],
                        created_by=request.user,
                    )
                except BrokerUnavailable as exc:  # the form stays, with the reason
                    return _upload_page(request, form, str(exc.detail), 503)
                return redirect("problems:import-detail", job_id=job.pk)
            status = 400
    else:
        form = ImportUploadForm()
    return _upload_page(request, form, refused, status)


def _upload_page(request, form: ImportUploadForm, refused: str, status: int):
    context = {
        "form": form,
        "refused": refused,
        "jobs": selectors.import_job_list(),
        "limit": megabytes(settings.PROOFMARK_MAX_UPLOAD_BYTES),
    }
    return render(request, "problems/import_upload.html", context, status=status)


COUNT_LABELS = (
    ("problems", "Problems"),
    ("reference_solutions", "Reference solutions"),
    ("proofs", "Proofs"),
    ("analyses", "Verifier analyses"),
)


@role_required(Role.ADMIN)
def import_detail(request, job_id):
    job = selectors.import_job_detail(job_id=job_id)
    counts = [(label, job.counts[key]) for key, label in COUNT_LABELS if key in job.counts]
    formats = [{**f, "label": FORMAT_LABELS.get(f["format"], f["format"])} for f in job.formats]
    waiting = job.status == job.Status.PENDING and workers_alive() is False
    context = {"job": job, "counts": counts, "formats": formats, "no_worker": waiting}
    return page_or_fragment(
        request,
        page="problems/import_detail.html",
        fragment="problems/_import_status.html",
        context=context,
    )
