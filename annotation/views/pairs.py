"""The pages of a pairwise campaign: the pair an expert judges (a form: A, B or tie, an optional
reason; keys in static/js/pairs.js), the next pair, skip, the campaign's pairs page (progress,
cases, Bradley-Terry scores per proof and generator, pairs made from a problem's proofs) and the
case page where an adjudicator settles a disagreement."""

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation import selectors
from annotation.models import TaskKind
from annotation.selectors import pairs as pair_selectors
from annotation.services import pairs as pair_services
from core.roles import ALL_ROLES, Role, has_role, role_required
from core.visibility import ensure_not_blind
from problems.models import Proof


def _see_other(url: str):
    response = redirect(url)
    response.status_code = 303  # the browser follows with a GET
    return response


def pair_lease_next(request, campaign, *, after: int | None = None):
    """Lease the expert's next pair and go to it, or say there is no work left."""
    try:
        judgement = pair_services.pair_next(campaign=campaign, expert=request.user, after=after)
    except pair_services.PairError as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain")
    if judgement is None:
        submitted = pair_selectors.expert_pair_totals(campaign=campaign, expert=request.user)
        return render(
            request, "annotation/pairs_no_work.html", {"campaign": campaign, "submitted": submitted}
        )
    return _see_other(reverse("annotation:pair", args=[judgement.pair_id]))


@require_POST
@role_required(*ALL_ROLES)
def pair_next(request, slug):
    campaign = selectors.expert_campaign(slug=slug, user=request.user)
    after = request.GET.get("after", "")
    return pair_lease_next(request, campaign, after=int(after) if after.isdigit() else None)


@never_cache  # back to a pair after submitting shows the server's state, not a stale page
@role_required(*ALL_ROLES)
def pair_page(request, pair_id):
    view = pair_selectors.pair_view_for_user(pair_id=pair_id, user=request.user)
    error = ""
    if request.method == "POST":
        try:
            pair_services.pair_judgement_submit(
                judgement_id=view.judgement.pk,
                expert=request.user,
                shown=request.POST.get("choice", ""),
                reason=request.POST.get("reason", ""),
            )
        except pair_services.PairError as exc:
            error = str(exc)
        else:
            campaign = view.pair.campaign
            return pair_lease_next(request, campaign, after=view.pair.pk)
        view = pair_selectors.pair_view_for_user(pair_id=pair_id, user=request.user)
    campaign = view.pair.campaign
    context = {
        "campaign": campaign,
        "view": view,
        "problem": view.problem,
        "error": error,
        "editable": campaign.is_open and not view.pair.is_final,
        "submitted_count": pair_selectors.expert_pair_totals(
            campaign=campaign, expert=request.user
        ),
    }
    return render(request, "annotation/pair.html", context, status=400 if error else 200)


@require_POST
@role_required(*ALL_ROLES)
def pair_skip(request, pair_id):
    view = pair_selectors.pair_view_for_user(pair_id=pair_id, user=request.user)
    if not view.judgement.is_submitted:
        pair_services.pair_judgement_release(judgement=view.judgement)
    return pair_lease_next(request, view.pair.campaign, after=view.pair.pk)


@role_required(*ALL_ROLES)
def pairs_campaign(request, slug):
    """The campaign's pairs page: experts get their count and the button; admins, adjudicators
    and researchers the progress, the cases and the Bradley-Terry scores (refused, naming why,
    to one who holds a pair of the campaign blind: the scores name the models)."""
    campaign = pair_selectors.pair_campaign_for_user(slug=slug, user=request.user)
    if campaign.task_kind != TaskKind.PAIRWISE:
        return redirect("annotation:campaign", slug=slug)
    if request.method == "POST":
        return _pairs_create(request, campaign)
    context = {
        "campaign": campaign,
        "submitted": pair_selectors.expert_pair_totals(campaign=campaign, expert=request.user),
        "is_expert": selectors.campaign_members(campaign)
        .filter(user=request.user, role="expert")
        .exists(),
        "is_admin": has_role(request.user, Role.ADMIN),
        "overview": has_role(request.user, Role.ADMIN, Role.ADJUDICATOR, Role.RESEARCHER),
    }
    if context["overview"]:
        ensure_not_blind(
            request.user, pair_selectors.pair_proofs(campaign), "this campaign's pairs", proof="pk"
        )
        ratings = pair_selectors.pair_ratings(campaign)
        context |= {
            "progress": pair_selectors.pair_progress(campaign),
            "disputed": pair_selectors.disputed_pairs(campaign),
            "ratings": ratings,
            "proof_rows": [(s, ratings.proof_labels.get(s.key, "")) for s in ratings.proofs],
        }
    return render(request, "annotation/pairs_campaign.html", context)


def _pairs_create(request, campaign):
    if not has_role(request.user, Role.ADMIN):
        return HttpResponseBadRequest("Only admins make pairs.", content_type="text/plain")
    problems = [p.strip() for p in request.POST.get("problems", "").replace(",", " ").split()]
    cap = request.POST.get("max_per_problem", "").strip()
    if not problems:
        return HttpResponseBadRequest(
            "problems: name at least one problem id.", content_type="text/plain"
        )
    if cap and not cap.isdigit():
        return HttpResponseBadRequest("max_per_problem: a whole number.", content_type="text/plain")
    ids = list(Proof.objects.filter(problem__external_id__in=problems).values_list("id", flat=True))
    try:
        made = pair_services.pairs_create(
            campaign=campaign, proof_ids=ids, max_per_problem=int(cap) if cap else None
        )
    except pair_services.PairError as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain")
    messages.success(request, f"{made} pair{'s' if made != 1 else ''} added.")
    return _see_other(reverse("annotation:pairs", args=[campaign.slug]))


@never_cache
@role_required(Role.ADJUDICATOR, Role.ADMIN)
def pair_case(request, pair_id):
    pair = pair_selectors.pair_case_for_user(pair_id=pair_id, user=request.user)
    error = ""
    if request.method == "POST":
        try:
            pair_services.pair_settle(
                pair_id=pair.pk,
                adjudicator=request.user,
                choice=request.POST.get("choice", ""),
                reason=request.POST.get("reason", ""),
            )
        except pair_services.PairError as exc:
            error = str(exc)
        else:
            return _see_other(reverse("annotation:pairs", args=[pair.campaign.slug]))
    texts = dict(
        Proof.objects.filter(id__in=[pair.proof_a_id, pair.proof_b_id]).values_list("id", "text")
    )
    context = {
        "pair": pair,
        "campaign": pair.campaign,
        "text_a": texts[pair.proof_a_id],
        "text_b": texts[pair.proof_b_id],
        "error": error,
    }
    return render(request, "annotation/pair_case.html", context, status=400 if error else 200)
