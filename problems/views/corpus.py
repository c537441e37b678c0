"""Corpus pages: the problem list (one view for the page and its htmx fragment), a problem,
and a proof. Every role may read the corpus; log-in is enforced by middleware."""

from django.core.paginator import Paginator
from django.shortcuts import render

from core.http import page_or_fragment, wants_fragment
from core.roles import ALL_ROLES, Role, has_role, role_required
from core.visibility import blind_among, blind_to_evaluations, blind_to_proof, holds_blind_work
from problems import selectors

PAGE_SIZE = 25


def _filters_from(request) -> selectors.ProblemFilters:
    params = request.GET
    year = params.get("year", "").strip()
    return selectors.ProblemFilters(
        contest=params.get("contest", "").strip(),
        year=int(year) if year.isdigit() else None,
        topic=params.get("topic", "").strip()[:1],
        search=params.get("q", "").strip()[:200],
    )


@role_required(*ALL_ROLES)
def problem_list_page(request):
    filters = _filters_from(request)
    paginator = Paginator(selectors.problem_list(filters=filters), PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {"page": page, "filters": filters, "query": query.urlencode()}
    if not wants_fragment(request):
        context["choices"] = selectors.problem_filter_choices()
    return page_or_fragment(
        request,
        page="problems/problem_list.html",
        fragment="problems/_problem_results.html",
        context=context,
    )


@role_required(*ALL_ROLES)
def problem_detail_page(request, external_id):
    problem = selectors.problem_detail(
        external_id=external_id, blind=holds_blind_work(request.user)
    )
    held = blind_among(request.user, [proof.pk for proof in problem.proofs.all()])
    for proof in problem.proofs.all():
        proof.held_blind = proof.pk in held
    context = {"problem": problem, "blind": blind_to_evaluations(request.user)}
    if has_role(request.user, Role.ADMIN):
        context["statements"] = selectors.problem_statements(problem=problem)
    return render(request, "problems/problem_detail.html", context)


@role_required(*ALL_ROLES)
def proof_detail_page(request, proof_id):
    proof = selectors.proof_detail(proof_id=proof_id)
    previous_id, next_id = selectors.proof_siblings(
        proof=proof, blind=holds_blind_work(request.user)
    )
    return render(
        request,
        "problems/proof_detail.html",
        {
            "proof": proof,
            "problem": proof.problem,
            "previous_id": previous_id,
            "next_id": next_id,
            "blind": blind_to_proof(request.user, proof.pk),
            # blind by the work held, not by role: say why this proof's fields are hidden
            "held_blind": not blind_to_evaluations(request.user),
        },
    )
