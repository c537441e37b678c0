"""The routing page of a campaign (admins): its item order and budget, a new ranking pass, and
the ranked queue with each item's uncertainty and its components."""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from annotation.models import ItemOrder
from annotation.selectors import campaign_for_user
from core.http import page_or_fragment, wants_fragment
from core.roles import Role, role_required
from estimation.routing import selectors
from estimation.routing.services import (
    RoutingError,
    campaign_rank,
    campaign_routing_set,
    parse_budget,
    parse_uniform_share,
)

QUEUE_PAGE = 50


class RoutingForm(forms.Form):
    item_order = forms.ChoiceField(choices=ItemOrder.choices, label="Order items by")
    budget = forms.CharField(
        required=False,
        max_length=12,
        label="Budget for experts",
        help_text="A share (0.3) or a percentage (30%) of the items; empty: every item.",
    )

    uniform_share = forms.CharField(
        required=False,
        max_length=12,
        label="Uniform share of the budget",
        help_text="Part of the budget drawn uniformly at random (0.25 or 25%); the rest is drawn "
        "with probabilities proportional to uncertainty. Empty: keep the campaign's.",
    )

    def clean_uniform_share(self):
        try:
            return parse_uniform_share(self.cleaned_data["uniform_share"])
        except RoutingError as exc:
            raise forms.ValidationError(str(exc).removeprefix("uniform_share: ")) from None

    def clean_budget(self):
        try:
            return parse_budget(self.cleaned_data["budget"])
        except RoutingError as exc:
            raise forms.ValidationError(str(exc).removeprefix("budget: ")) from None


def _summary(result) -> str:
    if result is None:
        return "Items are served in the order they were created; ranks cleared."
    text = f"Ranked {result.ranked} item(s): {result.served} for experts, {result.held} held"
    if result.auto_labelled:
        text += f", {result.auto_labelled} labelled automatically by the loop"
    return text + "."


@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def campaign_routing(request, slug):
    campaign = campaign_for_user(slug=slug, user=request.user, admin=True)
    initial = {
        "item_order": campaign.item_order,
        "budget": ""
        if campaign.routing_budget is None
        else f"{(campaign.routing_budget * 100).normalize():f}%",
        "uniform_share": f"{(campaign.routing_uniform_share * 100).normalize():f}%",
    }
    form = RoutingForm(initial=initial)
    if request.method == "POST":
        if request.POST.get("action") == "rank":
            try:
                messages.success(request, _summary(campaign_rank(campaign=campaign)))
            except RoutingError as exc:
                messages.error(request, str(exc))
            return redirect("exports:routing", slug=campaign.slug)
        form = RoutingForm(request.POST)
        if form.is_valid():
            try:
                result = campaign_routing_set(
                    campaign=campaign,
                    item_order=form.cleaned_data["item_order"],
                    budget=form.cleaned_data["budget"],
                    uniform_share=form.cleaned_data["uniform_share"],
                )
            except RoutingError as exc:
                field, _, text = str(exc).partition(": ")
                form.add_error(field if field in form.fields else None, text or str(exc))
            else:
                messages.success(request, "Routing saved. " + _summary(result))
                return redirect("exports:routing", slug=campaign.slug)
    page = Paginator(selectors.routing_queue(campaign), QUEUE_PAGE).get_page(
        request.GET.get("page")
    )
    context = {"campaign": campaign, "form": form, "page": page}
    return page_or_fragment(
        request,
        page="estimation/routing.html",
        fragment="estimation/_routing_queue.html",
        context=context,
        status=400 if form.errors else 200,
        as_fragment=wants_fragment(request) and request.method == "GET",
    )
