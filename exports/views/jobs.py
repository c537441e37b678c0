"""Export pages: the list with its form, a job's page with live progress, and the downloads.
(A job whose worker died is restarted by the jobs sweep that celery beat runs, not by a page.)"""

from django.contrib import messages
from django.http import FileResponse, Http404
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from core.http import page_or_fragment, wants_fragment
from core.roles import Role, has_role, role_required
from core.workers import workers_alive
from exports import selectors
from exports.formats import ExportError
from exports.forms import ExportForm
from exports.services import export_create, export_file_open
from jobs.models import JobStatus

READERS = (Role.ADMIN, Role.RESEARCHER)
JOBS_SHOWN = 50


@role_required(*READERS)
@require_http_methods(["GET", "POST"])
def export_list(request):
    form = ExportForm(
        request.POST or None,
        campaigns=selectors.campaigns_for_export(request.user),
        can_name=has_role(request.user, Role.ADMIN),
    )
    if request.method == "POST" and form.is_valid():
        try:
            job = export_create(
                user=request.user,
                campaign=form.cleaned_data["campaign"],
                fmt=form.cleaned_data["format"],
                file_type=form.cleaned_data["file_type"],
                filters=form.filters(),
                layout=form.cleaned_data.get("layout") or "file",
            )
        except ExportError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Export {job.pk} queued.")
            return redirect("exports:detail", job_id=job.pk)
    jobs = list(selectors.export_jobs_for_user(request.user)[:JOBS_SHOWN])
    context = {"form": form, "jobs": jobs, "any_active": any(j.is_active for j in jobs)}
    return page_or_fragment(
        request,
        page="exports/export_list.html",
        fragment="exports/_jobs.html",
        context=context,
        status=400 if form.errors else 200,
        as_fragment=wants_fragment(request) and request.method == "GET",
    )


@role_required(*READERS)
def export_detail(request, job_id: int):
    job = selectors.export_job_for_user(request.user, job_id)
    waiting = job.status == JobStatus.PENDING and workers_alive() is False
    return page_or_fragment(
        request,
        page="exports/export_detail.html",
        fragment="exports/_job_status.html",
        context={"job": job, "no_worker": waiting},
    )


@role_required(*READERS)
def export_download(request, job_id: int, part: str = "data"):
    job = selectors.export_job_for_user(request.user, job_id)
    try:
        handle, name = export_file_open(job, part)
    except (ExportError, KeyError) as exc:
        raise Http404(str(exc)) from exc
    except FileNotFoundError as exc:
        raise Http404("the file is no longer on the server") from exc
    return FileResponse(handle, as_attachment=True, filename=name)
