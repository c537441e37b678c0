"""Pages of webhooks (admins only): the hooks with the form to add one, a hook's page (its
secret, its deliveries with their tries, replay), deactivate and delete."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from core.http import page_or_fragment, wants_fragment
from core.roles import Role, role_required
from webhooks import selectors, services
from webhooks.forms import WebhookForm


@never_cache
@role_required(Role.ADMIN)
@require_http_methods(["GET", "POST"])
def webhook_list(request: HttpRequest) -> HttpResponse:
    form = WebhookForm(request.POST or None, initial={"active": True})
    if request.method == "POST" and form.is_valid():
        try:
            hook = services.webhook_create(
                url=form.cleaned_data["url"],
                events=form.cleaned_data["events"],
                active=form.cleaned_data["active"],
                description=form.cleaned_data["description"],
                owner=request.user,
            )
        except services.WebhookError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        else:
            messages.success(
                request, f"Webhook {hook.pk} added: its secret is on this page, keep it safe."
            )
            return redirect("webhooks:detail", webhook_id=hook.pk)
    return page_or_fragment(
        request,
        page="webhooks/webhook_list.html",
        fragment="webhooks/_hooks.html",
        context={"form": form, "hooks": list(selectors.webhook_list())},
        status=400 if form.errors else 200,
        as_fragment=wants_fragment(request) and request.method == "GET",
    )


def _detail(request: HttpRequest, webhook_id: int, *, refusal: str = "") -> HttpResponse:
    hook = selectors.webhook_get(webhook_id=webhook_id)
    deliveries = selectors.webhook_deliveries(webhook=hook)
    return page_or_fragment(
        request,
        page="webhooks/webhook_detail.html",
        fragment="webhooks/_deliveries.html",
        context={
            "hook": hook,
            "deliveries": deliveries,
            "any_active": any(d.is_active for d in deliveries),
            "refusal": refusal,
        },
    )


@never_cache
@role_required(Role.ADMIN)
def webhook_detail(request: HttpRequest, webhook_id: int) -> HttpResponse:
    """The hook's page; htmx asks for its deliveries alone (polled while one is under way)."""
    return _detail(request, webhook_id)


@role_required(Role.ADMIN)
@require_POST
def webhook_active(request: HttpRequest, webhook_id: int) -> HttpResponse:
    """Deactivates or activates the hook (`active` = 1 or 0)."""
    hook = selectors.webhook_get(webhook_id=webhook_id)
    services.webhook_update(webhook=hook, active=request.POST.get("active") == "1", by=request.user)
    messages.success(request, f"Webhook {hook.pk} {'activated' if hook.active else 'deactivated'}.")
    return redirect("webhooks:detail", webhook_id=hook.pk)


@role_required(Role.ADMIN)
@require_POST
def webhook_delete(request: HttpRequest, webhook_id: int) -> HttpResponse:
    """Deletes the hook; sent again (a double click, a resend after a lost answer) it finds the
    hook gone and says so on the list, not a 404."""
    try:
        hook = selectors.webhook_get(webhook_id=webhook_id)
    except Http404:
        messages.info(request, f"Webhook {webhook_id} was already deleted.")
        return redirect("webhooks:list")
    services.webhook_delete(webhook=hook)
    messages.success(request, f"Webhook {webhook_id} deleted, with its deliveries.")
    return redirect("webhooks:list")


@role_required(Role.ADMIN)
@require_POST
def delivery_replay(request: HttpRequest, delivery_id: int) -> HttpResponse:
    """Queues the delivery again; htmx gets the hook's deliveries, a plain post the page."""
    delivery = selectors.delivery_get(delivery_id=delivery_id)
    refusal = ""
    try:
        replay = services.delivery_replay(delivery=delivery)
    except services.WebhookError as exc:
        refusal = exc.message
    if wants_fragment(request):  # htmx swaps only a 2xx: the refusal is said in the fragment
        return _detail(request, delivery.webhook_id, refusal=refusal)
    if refusal:
        messages.error(request, refusal)
    else:
        messages.success(request, f"Delivery {delivery.pk} queued again as {replay.pk}.")
    return redirect("webhooks:detail", webhook_id=delivery.webhook_id)
