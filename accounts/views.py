"""The single sign-on's two pages (mozilla-django-oidc's views, under /accounts/oidc/): the start,
which sends the browser to the provider, and the callback it comes back to. Without
OIDC_RP_CLIENT_ID both are 404. A refused sign-on is the log-in page saying why: 400 for a
callback this browser did not start (a bad or replayed state), 403 for a refusal."""

from django.http import Http404
from django.shortcuts import render
from django.views import View
from mozilla_django_oidc import views as oidc_views

from accounts.oidc import login_options, oidc_configured


def _refused(request, message: str, status: int):
    context = {"refusal": message, "next": "", **login_options()}
    return render(request, "registration/login.html", context, status=status)


class OIDCStartView(oidc_views.OIDCAuthenticationRequestView):
    def __init__(self, *args, **kwargs):
        View.__init__(self, *args, **kwargs)  # the provider's settings are read per request

    def get(self, request):
        if not oidc_configured():
            raise Http404("Single sign-on is not configured.")
        self.OIDC_OP_AUTH_ENDPOINT = self.get_settings("OIDC_OP_AUTHORIZATION_ENDPOINT")
        self.OIDC_RP_CLIENT_ID = self.get_settings("OIDC_RP_CLIENT_ID")
        return super().get(request)


class OIDCCallbackView(oidc_views.OIDCAuthenticationCallbackView):
    def get(self, request):
        if not oidc_configured():
            raise Http404("Single sign-on is not configured.")
        error = request.GET.get("error")
        state = request.GET.get("state")
        if not error and (not state or not request.GET.get("code")):
            return _refused(request, "The provider's answer lacks its code or state.", 400)
        if state not in request.session.get("oidc_states", {}):
            return _refused(
                request,
                "This sign-in was not started from this browser, or was used already: "
                "sign in again.",
                400,
            )
        self._error = request.GET.get("error_description") or error
        return super().get(request)

    def login_failure(self):
        if self._error:
            message = f"The provider refused the sign-in: {self._error}."
        else:
            message = getattr(self.request, "oidc_refusal", None) or (
                "The sign-in could not be completed: try again."
            )
        return _refused(self.request, message, 403)
