"""The log-in page: with DEBUG on and the demo loaded, it names the demo accounts (their
passwords are published in the README)."""

from django.conf import settings
from django.contrib.auth import views as auth_views

from problems.demo.loader import demo_accounts_loaded


class LoginView(auth_views.LoginView):
    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["demo_accounts"] = demo_accounts_loaded() if settings.DEBUG else []
        return context
