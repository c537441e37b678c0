"""/accounts/oidc/: the single sign-on's start and callback (accounts.views)."""

from django.contrib.auth.decorators import login_not_required
from django.urls import path

from accounts import views

urlpatterns = [
    path(
        "authenticate/",
        login_not_required(views.OIDCStartView.as_view()),
        name="oidc_authentication_init",
    ),
    path("callback/", login_not_required(views.OIDCCallbackView.as_view()), name="oidc_callback"),
]
