import json

from django.contrib.auth import views as auth_views
from django.contrib.auth.models import Group, User
from django.http import JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt


@csrf_exempt
def user_put(request):
    """The tests' door (loopback only): makes or changes a user and their groups."""
    body = json.loads(request.body)
    user, _ = User.objects.get_or_create(username=body["username"])
    user.email = body.get("email", "")
    user.first_name = body.get("first_name", "")
    user.set_password(body["password"])
    user.save()
    user.groups.set([Group.objects.get_or_create(name=name)[0] for name in body["groups"]])
    return JsonResponse({"sub": str(user.pk)})


urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("testing/users/", user_put),
]
