"""The log-in page: with DEBUG on and the demo loaded, it names the demo accounts (their
passwords are published in the README)."""

from django.conf import settings
from django.contrib.auth import views as auth_views

from accounts.login_limits import login_refusal
from accounts.oidc import login_options
from problems.demo.loader import demo_accounts_loaded


class LoginView(auth_views.LoginView):
    """Django's log-in, refused before the password is checked where accounts.login_limits
    says (429 with the reason on the form, and Retry-After where a wait will do); beside it the
    single sign-on's link, and no form at all with PASSWORD_LOGIN off (accounts.oidc)."""

    def post(self, request, *args, **kwargs):
        if not settings.PASSWORD_LOGIN:
            response = self.render_to_response(
                self.get_context_data(refusal="Log-in with a password is switched off here.")
            )
            response.status_code = 403
            return response
        refusal = login_refusal(request, request.POST.get("username", ""))
        if refusal is None:
            return super().post(request, *args, **kwargs)
        # the form unbound: validating it would check the password
        form = self.get_form_class()(request, initial={"username": request.POST.get("username")})
        response = self.render_to_response(
            self.get_context_data(form=form, refusal=refusal.message)
        )
        response.status_code = 429
        if refusal.retry_after is not None:
            response["Retry-After"] = str(refusal.retry_after)
        return response

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["demo_accounts"] = (
            demo_accounts_loaded() if settings.DEBUG and settings.PASSWORD_LOGIN else []
        )
        context.update(login_options(context.get("next", "")))
        return context
