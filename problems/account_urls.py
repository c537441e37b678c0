"""/accounts/login/: the log-in page of problems.views.accounts (it knows the demo accounts)."""

from django.urls import path

from problems.views import accounts

urlpatterns = [path("login/", accounts.LoginView.as_view(), name="login")]
