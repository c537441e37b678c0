"""Campaign pages: the list, create/edit, the admin dashboard (progress, queues, assignment,
history), members, items from a selection; and for experts their progress, "next" and the
"no work left" page."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation import selectors, services
from annotation.calibration_gate import CalibrationRequired
from annotation.forms import AssignForm, CampaignForm, MemberForm, MoveForm, SelectionForm
from annotation.models import Assignment, CampaignMember, Item, TaskKind
from annotation.plots import scores_svg
from annotation.scales import scale_spec
from annotation.services.review import analysis_items_create
from annotation.views.pairs import pair_lease_next
from core.http import page_or_fragment, wants_fragment
from core.roles import ALL_ROLES, Role, has_role, role_required
from core.visibility import blind_among, blind_count, holds_blind_work, without_blind_proofs
from problems.models import VerifierAnalysis

User = get_user_model()
OWN_GRADES_PAGE = 25
BLIND_GENERATOR = (
    "You are grading proofs blind as an expert: proofs are not chosen by model until you have "
    "submitted your grades."
)


@role_required(*ALL_ROLES)
def campaign_list(request):
    campaigns = selectors.campaign_list_for_user(request.user)
    return render(request, "annotation/campaign_list.html", {"campaigns": campaigns})


@role_required(Role.ADMIN)
def campaign_create_view(request):
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        name = data.pop("name")
        try:
            campaign = services.campaign_create(name=name, created_by=request.user, **data)
        except services.CampaignError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Campaign {campaign.name} created.")
            return redirect("annotation:campaign", slug=campaign.slug)
    return render(request, "annotation/campaign_form.html", {"form": form, "campaign": None})


@role_required(Role.ADMIN)
def campaign_edit(request, slug):
    campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
    form = CampaignForm(request.POST or None, initial=CampaignForm.initial_from(campaign))
    if request.method == "POST" and form.is_valid():
        try:
            campaign = services.campaign_update(
                campaign=campaign, updated_by=request.user, **form.cleaned_data
            )
        except services.CampaignError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Campaign saved.")
            return redirect("annotation:campaign", slug=campaign.slug)
    return render(request, "annotation/campaign_form.html", {"form": form, "campaign": campaign})


@role_required(*ALL_ROLES)
def campaign_detail(request, slug):
    campaign = selectors.campaign_for_user(slug=slug, user=request.user)
    if campaign.task_kind == TaskKind.PAIRWISE and not has_role(request.user, Role.ADMIN):
        return redirect("annotation:pairs", slug=slug)  # its page (annotation/views/pairs.py)
    if not has_role(request.user, Role.ADMIN):
        grades = selectors.own_grades_in_campaign(campaign=campaign, expert=request.user)
        context = {
            "campaign": campaign,
            "page": Paginator(grades, OWN_GRADES_PAGE).get_page(request.GET.get("page")),
        }
        if not wants_fragment(request):
            context["totals"] = selectors.expert_totals(campaign=campaign, expert=request.user)
        return page_or_fragment(
            request,
            page="annotation/campaign_expert.html",
            fragment="annotation/_own_grades.html",
            context=context,
        )
    progress = selectors.campaign_progress(campaign)
    spec = scale_spec(campaign.scale)
    blind = holds_blind_work(request.user)
    assignable = selectors.items_for_hand_assignment(campaign, blind=blind)
    held = blind_among(request.user, [it.proof_id for _, items in assignable for it in items])
    # an admin grading in the campaign: its scores per model are theirs once they have graded
    grading = bool(blind and blind_count(request.user, campaign.items.all()))
    return render(
        request,
        "annotation/campaign_dashboard.html",
        {
            "campaign": campaign,
            "progress": progress,
            "plot": scores_svg(progress.scores_by_generator, low=min(spec.min, 0), high=spec.max),
            "scale_values": spec.values,
            "generator_rows": selectors.generator_score_rows(
                progress.scores_by_generator, spec.values
            ),
            "members": selectors.campaign_members(campaign),
            "member_form": MemberForm(),
            "assign_form": AssignForm(),
            "experts": selectors.experts_for_assignment(campaign),
            "assignable": assignable,
            "held": held,
            "grading_blind": grading,
            "assignable_cap": selectors.HAND_ASSIGNABLE_SHOWN,
            "revisions": [
                (r, sorted(k for k in r.new if r.new.get(k) != r.old.get(k)))
                # none of the items the admin holds as an expert, ungraded (core.visibility)
                for r in without_blind_proofs(
                    request.user,
                    selectors.revisions_for_campaign(campaign),
                    proof="grade__item__proof",
                )[:50]
            ],
            "older_pins": selectors.items_on_older_schemes(campaign),
        },
    )


@require_POST
@role_required(Role.ADMIN)
def member_add(request, slug):
    campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
    form = MemberForm(request.POST)
    if form.is_valid():
        services.campaign_member_add(
            campaign=campaign, user=form.cleaned_data["username"], role=form.cleaned_data["role"]
        )
        messages.success(request, f"{form.cleaned_data['username']} added.")
    else:
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
    return redirect("annotation:campaign", slug=slug)


@require_POST
@role_required(Role.ADMIN)
def member_remove(request, slug, member_id):
    campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
    member = get_object_or_404(CampaignMember, pk=member_id, campaign=campaign)
    services.campaign_member_remove(member=member)
    messages.success(request, "Member removed.")
    return redirect("annotation:campaign", slug=slug)


@role_required(Role.ADMIN)
def items_create(request, slug):
    campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
    form = SelectionForm(request.POST or request.GET or None)
    preview = None
    # a user grading blind finds no proof by its model (core.visibility)
    blind = holds_blind_work(request.user)
    if blind and form.is_bound and form.data.get("generator"):
        form.add_error("generator", BLIND_GENERATOR)
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        proofs = selectors.proof_selection(
            contest=data["contest"], year=data["year"], generator=data["generator"],
            problem=data["problem"], blind=blind,
        )  # fmt: skip
        if request.method == "POST" and campaign.task_kind == TaskKind.ANALYSIS_REVIEW:
            try:
                result = analysis_items_create(
                    campaign=campaign,
                    analyses=VerifierAnalysis.objects.filter(proof__in=proofs),
                    required_judgements=data["required_judgements"],
                    is_gold=data["is_gold"],
                )
            except services.GradeError as exc:
                messages.error(request, str(exc))
                return redirect("annotation:items-create", slug=slug)
            level = messages.SUCCESS if result.created_ids else messages.WARNING
            messages.add_message(
                request, level, result.summary().replace("item(s)", "analysis item(s)")
            )
            return redirect("annotation:campaign", slug=slug)
        if request.method == "POST":
            try:
                result = services.items_create_from_selection(
                    campaign=campaign,
                    proofs=proofs,
                    required_judgements=data["required_judgements"],
                    is_gold=data["is_gold"],
                )
            except services.GradeError as exc:
                messages.error(request, str(exc))
                return redirect("annotation:campaign", slug=slug)
            level = (
                messages.WARNING
                if result.not_from_config or not result.created_ids
                else messages.SUCCESS
            )
            messages.add_message(request, level, result.summary())
            return redirect("annotation:campaign", slug=slug)
        shown = list(proofs[:20])
        held = blind_among(request.user, [proof.pk for proof in shown])
        for proof in shown:
            proof.held_blind = proof.pk in held
        preview = {
            "counted": selectors.selection_preview(campaign=campaign, proofs=proofs),
            "proofs": shown,
        }
    choices = selectors.selection_choices()
    if blind:
        choices = {**choices, "generators": []}
    return render(
        request,
        "annotation/items_create.html",
        {
            "campaign": campaign,
            "form": form,
            "preview": preview,
            "choices": choices,
            "blind": blind,
        },
    )


@require_POST
@role_required(Role.ADMIN)
def assign(request, slug):
    campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
    form = AssignForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose an item (problem and proof) and an expert.")
        return redirect("annotation:campaign", slug=slug)
    item = Item.objects.filter(pk=form.cleaned_data["item"], campaign=campaign).first()
    expert = User.objects.filter(username=form.cleaned_data["username"]).first()
    if item is None or expert is None:
        messages.error(request, "No such item in this campaign, or no such user.")
        return redirect("annotation:campaign", slug=slug)
    try:
        services.assignment_create_manual(item=item, expert=expert, assigned_by=request.user)
    except services.AssignmentError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Item {item.pk} assigned to {expert}.")
    return redirect("annotation:campaign", slug=slug)


@require_POST
@role_required(Role.ADMIN)
def move(request, slug):
    campaign = selectors.campaign_for_user(slug=slug, user=request.user, admin=True)
    form = MoveForm(request.POST)
    assignment = None
    expert = None
    if form.is_valid():
        assignment = Assignment.objects.filter(
            pk=form.cleaned_data["assignment"], item__campaign=campaign
        ).first()
        expert = User.objects.filter(username=form.cleaned_data["username"]).first()
    if assignment is None or expert is None:
        messages.error(request, "Choose an assignment of this campaign and an existing expert.")
        return redirect("annotation:campaign", slug=slug)
    try:
        services.assignment_move(assignment=assignment, to_expert=expert, moved_by=request.user)
    except services.AssignmentError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Item {assignment.item_id} moved to {expert}.")
    return redirect("annotation:campaign", slug=slug)


def lease_next(request, campaign, *, after_item_id: int | None = None):
    """Leases the expert's next item of `campaign` (never `after_item_id`, the item they come
    from) and goes to it (303), or says there is no work left. Only ever called for a POST."""
    try:
        assignment = services.assignment_next(
            campaign=campaign, expert=request.user, after_item_id=after_item_id
        )
    except CalibrationRequired as exc:  # where they stand and what to do (calibration app)
        response = redirect(exc.standing_url)
        response.status_code = 303
        return response
    if assignment is None:
        totals = selectors.expert_totals(campaign=campaign, expert=request.user)
        held = (
            after_item_id
            if selectors.expert_holds_item(expert=request.user, item_id=after_item_id)
            else None
        )
        return render(
            request,
            "annotation/no_work.html",
            {"campaign": campaign, "totals": totals, "held_item_id": held},
        )
    response = redirect("annotation:item", item_id=assignment.item_id)
    response.status_code = 303  # the browser follows with a GET
    return response


@role_required(*ALL_ROLES)
def next_item(request, slug):
    """ "Grade next" is a form POST (it leases an item; `?after=ID` moves on from that item);
    a GET only leads to the campaign's page, where the button is."""
    campaign = selectors.expert_campaign(slug=slug, user=request.user)
    if request.method != "POST":
        return redirect("annotation:campaign", slug=campaign.slug)
    if campaign.task_kind == TaskKind.PAIRWISE:
        return pair_lease_next(request, campaign)
    after = request.GET.get("after", "")
    return lease_next(request, campaign, after_item_id=int(after) if after.isdigit() else None)
