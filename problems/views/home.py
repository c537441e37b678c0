"""The landing page, in the lowest app whose figures it shows (config/urls.py wires it)."""

from django.shortcuts import render

from core.roles import user_roles
from problems.selectors import corpus_counts


def home(request):
    """The landing page: what each of the user's roles can do from here."""
    return render(
        request,
        "home.html",
        {"held_roles": sorted(user_roles(request.user)), "counts": corpus_counts()},
    )
