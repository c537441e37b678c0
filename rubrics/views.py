"""Scheme pages: the list (page and htmx fragment), a version (rendered scheme beside the
problem, checklist, validation, history with diff, ratings), rating, editing, approving, and
the admins' ratings dashboard. Every role reads schemes; experts and admins rate; admins edit
and approve. Log-in is enforced by middleware."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core.http import page_or_fragment, wants_fragment
from core.roles import ALL_ROLES, Role, has_role, role_required
from rubrics import selectors, services
from rubrics.forms import EditForm, RateForm, SchemeFilterForm
from rubrics.models import SchemeMethod, SchemeStatus
from rubrics.structure import Message, Scheme

PAGE_SIZE = 25


@role_required(*ALL_ROLES)
def scheme_list_page(request):
    form = SchemeFilterForm(request.GET)
    filters = form.filters()
    paginator = Paginator(selectors.scheme_list(filters=filters), PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "filters": filters,
        "form": form,
        "query": query.urlencode(),
        "show_means": selectors.scheme_rating_means_visible(user=request.user),
    }
    if not wants_fragment(request):
        context["contests"] = selectors.scheme_filter_choices()["contests"]
    return page_or_fragment(
        request,
        page="rubrics/scheme_list.html",
        fragment="rubrics/_scheme_results.html",
        context=context,
    )


def _ratings_context(request, scheme, rate_form=None) -> dict:
    ratings = selectors.scheme_ratings_for_user(scheme=scheme, user=request.user)
    mine = next((r for r in ratings if r.rater_id == request.user.pk), None)
    can_rate = has_role(request.user, Role.EXPERT, Role.ADMIN)
    if can_rate and rate_form is None:
        rate_form = RateForm(
            initial={"score": mine.score, "comment": mine.comment} if mine else None
        )
    return {
        "scheme": scheme,
        "ratings": ratings,
        "my_rating": mine,
        "rate_form": rate_form if can_rate else None,
        "sees_all_ratings": has_role(request.user, Role.ADMIN),
    }


def _chain_rows(parsed: Scheme | None) -> list[dict]:
    """Each chain with the most it can score together with the shared prerequisites."""
    if parsed is None:
        return []
    totals = parsed.chain_totals()
    return [{"chain": chain, "total": totals[chain.id]} for chain in parsed.chains]


@role_required(*ALL_ROLES)
def scheme_detail_page(request, scheme_id: int):
    scheme = selectors.scheme_detail(scheme_id=scheme_id)
    base = selectors.scheme_diff_base(scheme=scheme)
    parsed = Scheme.from_dict(scheme.structure) if scheme.structure else None
    is_admin = has_role(request.user, Role.ADMIN)
    context = {
        "problem": scheme.problem,
        "parsed": parsed,
        "chain_rows": _chain_rows(parsed),
        "validation": [Message.from_dict(m) for m in scheme.validation],
        "versions": scheme.problem.marking_schemes.all(),
        "diff_base": base,
        "diff": selectors.scheme_diff(old=base.text, new=scheme.text) if base else [],
        "can_edit": is_admin,
        "show_means": selectors.scheme_rating_means_visible(user=request.user),
        "can_approve": is_admin and scheme.status == SchemeStatus.DRAFT,
        **_ratings_context(request, scheme),
    }
    return render(request, "rubrics/scheme_detail.html", context)


@require_POST
@role_required(Role.EXPERT, Role.ADMIN)
def scheme_rate_view(request, scheme_id: int):
    scheme = selectors.scheme_detail(scheme_id=scheme_id)
    form = RateForm(request.POST)
    if form.is_valid():
        services.scheme_rate(
            scheme=scheme,
            rater=request.user,
            score=form.cleaned_data["score"],
            comment=form.cleaned_data["comment"],
        )
        if not request.htmx:
            messages.success(request, f"Your rating of version {scheme.version} is saved.")
            return redirect("rubrics:detail", scheme_id=scheme.pk)
        scheme = selectors.scheme_detail(scheme_id=scheme_id)
        context = _ratings_context(request, scheme)
        context["saved"] = True
        return render(request, "rubrics/_ratings.html", context)
    context = _ratings_context(request, scheme, rate_form=form)
    status = 422 if request.htmx else 400
    if request.htmx:
        return render(request, "rubrics/_ratings.html", context, status=status)
    messages.error(request, "The rating was not saved: choose a rating from 0 to 3.")
    return redirect("rubrics:detail", scheme_id=scheme.pk)


def _saved_message(request, scheme) -> None:
    if scheme.is_valid:
        messages.success(request, f"Saved as version {scheme.version} (a draft, valid).")
        return
    problems = [m["text"] for m in scheme.validation if m.get("level") == "error"]
    messages.warning(
        request,
        f"Saved as draft version {scheme.version}, which cannot be approved yet: "
        + " ".join(problems),
    )


@role_required(Role.ADMIN)
def scheme_edit_view(request, scheme_id: int):
    scheme = selectors.scheme_detail(scheme_id=scheme_id)
    form = EditForm(
        request.POST or None,
        initial={"text": scheme.text, "fmt": services.scheme_text_format(scheme)},
    )
    if request.method == "POST" and form.is_valid():
        try:
            edited = services.scheme_edit(
                scheme=scheme,
                text=form.cleaned_data["text"],
                fmt=form.cleaned_data["fmt"],
                user=request.user,
            )
        except ValidationError as exc:
            for message in exc.messages:
                form.add_error("text", message)
        else:
            _saved_message(request, edited)
            return redirect("rubrics:detail", scheme_id=edited.pk)
    return render(
        request,
        "rubrics/scheme_edit.html",
        {"form": form, "scheme": scheme, "problem": scheme.problem},
    )


@role_required(Role.ADMIN)
def scheme_new(request, external_id: str):
    problem = selectors.problem_for_scheme(external_id=external_id)
    form = EditForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        created = services.scheme_version_create(
            problem=problem,
            text=form.cleaned_data["text"].replace("\r\n", "\n"),
            method=SchemeMethod.MANUAL,
            fmt=form.cleaned_data["fmt"],
            created_by=request.user,
        )
        _saved_message(request, created)
        return redirect("rubrics:detail", scheme_id=created.pk)
    return render(
        request, "rubrics/scheme_edit.html", {"form": form, "scheme": None, "problem": problem}
    )


@role_required(Role.ADMIN)
def scheme_new_pick(request):
    """The list's "write a scheme" box: on to the form for the problem named."""
    external_id = request.GET.get("problem", "").strip()[:200]
    if external_id and selectors.problem_exists(external_id=external_id):
        return redirect("rubrics:new", external_id=external_id)
    messages.error(
        request, f"No problem has the id {external_id!r}: check it on the Problems page."
    )
    return redirect("rubrics:list")


@require_POST
@role_required(Role.ADMIN)
def scheme_approve_view(request, scheme_id: int):
    scheme = selectors.scheme_detail(scheme_id=scheme_id)
    try:
        approved = services.scheme_approve(scheme=scheme, user=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        moved = approved.repinned_items
        messages.success(
            request,
            f"Version {scheme.version} is now the approved scheme of {scheme.problem.external_id}; "
            f"{moved} item{'' if moved == 1 else 's'} of open campaigns waiting for a grade "
            f"now use{'s' if moved == 1 else ''} it (items with submitted grades keep their "
            "version).",
        )
    return redirect("rubrics:detail", scheme_id=scheme.pk)


@role_required(Role.ADMIN)
def ratings_dashboard(request):
    return render(
        request,
        "rubrics/ratings_dashboard.html",
        {"groups": selectors.scheme_ratings_summary(), "scale": selectors.RATING_SCALE},
    )
