from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required, login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from core import (
    api_docs,
    converters,  # noqa: F401 (registers <id:...>, used by every app's URLs)
    views,
)
from core.roles import ALL_ROLES, role_required
from estimation import urls as estimation_urls
from exports import urls as exports_urls
from graders import urls as graders_urls
from problems.views.home import home

# The export, grader evaluation and estimation pages share /exports/ and the `exports` namespace
# (their paths and URL names from before graders and estimation were split from exports).
EXPORTS_PAGES = [
    *exports_urls.urlpatterns,
    *graders_urls.urlpatterns,
    *estimation_urls.urlpatterns,
]

# The API first: its prefix shares nothing with the pages', and a judgement is its busiest
# request (each pattern before it is one more match tried on every call).
urlpatterns = [
    path("api/v1/", include("config.api_urls")),
    path("", home, name="home"),
    path("accounts/", include("problems.account_urls")),
    path("accounts/oidc/", include("accounts.urls")),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("problems/", include("problems.urls")),
    path("rubrics/", include("rubrics.urls")),
    path("annotation/", include("annotation.urls")),
    path("adjudication/", include("adjudication.urls")),
    path("exports/", include((EXPORTS_PAGES, "exports"))),
    path("calibration/", include("calibration.urls")),
    path("webhooks/", include("webhooks.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        login_required(role_required(*ALL_ROLES)(api_docs.api_docs)),
        name="api-docs",
    ),
    path("healthz", login_not_required(views.healthz), name="healthz"),
    path("readyz", login_not_required(views.readyz), name="readyz"),
]

handler400 = "core.errors.bad_request"
handler403 = "core.errors.permission_denied"
handler404 = "core.errors.page_not_found"
handler500 = "core.errors.server_error"
