from django.http import HttpResponse
from django.shortcuts import render

from config.roles import user_roles
from problems.selectors import corpus_counts


def home(request):
    """The landing page: what each of the user's roles can do from here."""
    return render(
        request,
        "home.html",
        {"held_roles": sorted(user_roles(request.user)), "counts": corpus_counts()},
    )


def healthz(request):
    return HttpResponse("ok", content_type="text/plain")
