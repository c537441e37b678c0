"""Pages of verifier runs and the automated labelling loop (admins): start runs from a proof
selection, follow their progress (htmx polling a fragment; the state is in the database),
retry failures, send an audit sample to experts and read the agreement."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from adjudication.verification import labelling, verifier_runs
from adjudication.verification import selectors as loop_selectors
from adjudication.verification.forms import AuditForm, LabellingRunForm, VerifierRunForm
from core.http import page_or_fragment, wants_fragment
from core.roles import Role, role_required


def _index(request, verifier_form=None, loop_form=None, status=200) -> HttpResponse:
    return render(
        request,
        "adjudication/verification.html",
        {
            "verifier_form": verifier_form or VerifierRunForm(),
            "loop_form": loop_form or LabellingRunForm(),
            "verifier_runs": loop_selectors.verifier_runs_recent(),
            "labelling_runs": loop_selectors.labelling_runs_recent(),
        },
        status=status,
    )


@role_required(Role.ADMIN)
def verification(request: HttpRequest) -> HttpResponse:
    return _index(request)


@require_POST
@role_required(Role.ADMIN)
def verifier_run_create(request: HttpRequest) -> HttpResponse:
    form = VerifierRunForm(request.POST)
    if not form.is_valid():
        return _index(request, verifier_form=form, status=400)
    data = form.cleaned_data
    proofs = form.proofs()
    targets = loop_selectors.verifier_run_targets(
        kind=data["kind"], proofs=proofs, verifier=data["verifier"]
    )
    try:
        run = verifier_runs.verifier_run_start(
            kind=data["kind"],
            endpoint=data["endpoint"],
            targets=targets,
            samples=data["samples"],
            user=request.user,
        )
    except verifier_runs.VerifierRunError as exc:
        form.add_error(None, str(exc))
        return _index(request, verifier_form=form, status=400)
    return redirect("adjudication:verifier-run", run_id=run.pk)


@role_required(Role.ADMIN)
def verifier_run_page(request: HttpRequest, run_id: int) -> HttpResponse:
    run = loop_selectors.verifier_run_detail(run_id)
    context = {"run": run}
    if not wants_fragment(request):
        context["samples"] = loop_selectors.verifier_run_samples(run, user=request.user)
    return page_or_fragment(
        request,
        page="adjudication/verifier_run.html",
        fragment="adjudication/_verifier_run_progress.html",
        context=context,
    )


@require_POST
@role_required(Role.ADMIN)
def verifier_run_retry_view(request: HttpRequest, run_id: int) -> HttpResponse:
    run = loop_selectors.verifier_run_detail(run_id)
    verifier_runs.verifier_run_retry(run=run)
    messages.success(request, "The failed samples are asked for again; usable ones are kept.")
    return redirect("adjudication:verifier-run", run_id=run.pk)


@require_POST
@role_required(Role.ADMIN)
def labelling_run_create(request: HttpRequest) -> HttpResponse:
    form = LabellingRunForm(request.POST)
    if not form.is_valid():
        return _index(request, loop_form=form, status=400)
    data = form.cleaned_data
    try:
        run = labelling.labelling_run_start(
            proofs=list(form.proofs()),
            verifier=data["verifier"],
            meta_verifier=data["meta_verifier"],
            n=data["n"],
            m=data["m"],
            k=data["k"],
            confirm_at=data["confirm_at"],
            route_campaign=data["route_campaign"],
            auto_campaign=data["auto_campaign"],
            user=request.user,
        )
    except labelling.LabellingError as exc:
        form.add_error(None, str(exc))
        return _index(request, loop_form=form, status=400)
    return redirect("adjudication:labelling-run", run_id=run.pk)


@role_required(Role.ADMIN)
def labelling_run_page(request: HttpRequest, run_id: int) -> HttpResponse:
    run = loop_selectors.labelling_run_detail(run_id)
    context = {"run": run, "outcomes": loop_selectors.labelling_run_outcomes(run)}
    if not wants_fragment(request):
        context["audit_form"] = AuditForm()
        context["audit"] = labelling.labelling_audit_agreement(run) if run.audit_campaign else None
    return page_or_fragment(
        request,
        page="adjudication/labelling_run.html",
        fragment="adjudication/_labelling_progress.html",
        context=context,
    )


@require_POST
@role_required(Role.ADMIN)
def labelling_run_retry(request: HttpRequest, run_id: int) -> HttpResponse:
    run = loop_selectors.labelling_run_detail(run_id)
    count = labelling.labelling_run_retry_failed(run=run)
    messages.success(request, f"{count} failed proof(s) sent through the loop again.")
    return redirect("adjudication:labelling-run", run_id=run.pk)


@require_POST
@role_required(Role.ADMIN)
def labelling_audit(request: HttpRequest, run_id: int) -> HttpResponse:
    run = loop_selectors.labelling_run_detail(run_id)
    form = AuditForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose an expert campaign and a sample size.")
        return redirect("adjudication:labelling-run", run_id=run.pk)
    try:
        items = labelling.labelling_audit_send(run=run, **form.cleaned_data)
    except labelling.LabellingError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request, f"{len(items)} automatically labelled proof(s) sent to the experts."
        )
    return redirect("adjudication:labelling-run", run_id=run.pk)
