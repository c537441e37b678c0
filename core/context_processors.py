from functools import lru_cache

from django.template.loader import render_to_string
from django.urls import get_script_prefix, reverse
from django.utils.safestring import mark_safe

from core.roles import Role, user_roles

A, E, J, R = Role.ADMIN, Role.EXPERT, Role.ADJUDICATOR, Role.RESEARCHER
# The top bar's links in order: (label, URL name, the roles that see it; None: everyone logged
# in). Where two links share a place, the first whose roles match is shown.
_NAV = (
    ("Problems", "problems:list", None),
    ("Marking schemes", "rubrics:list", None),
    (("Campaigns", "annotation:campaigns", {A}), ("Grading", "annotation:campaigns", {E})),
    (("Adjudication", "adjudication:queue", {J, A}), ("Discussions", "adjudication:returned", {E})),
    ("Verification", "adjudication:verification", {A}),
    ("Exports", "exports:list", {R, A}),
    ("Calibration", "calibration:home", {A, E}),
    ("Import", "problems:import", {A}),
    ("Generate", "rubrics:generate", {A}),
    ("Webhooks", "webhooks:list", {A}),
    ("Admin", "admin:index", {A}),
    ("API", "api-docs", None),
)


@lru_cache(maxsize=64)
def _nav(held: frozenset[Role], prefix: str) -> dict:
    """The top bar for a set of roles, its links reversed and drawn once per process (and script
    prefix: `reverse` reads it), not on every page."""
    links = []
    for place in _NAV:
        for label, name, roles in place if isinstance(place[0], tuple) else (place,):
            if roles is None or held & roles:
                links.append((label, reverse(name)))
                break
    return {
        "links": mark_safe(render_to_string("_nav.html", {"links": links}).strip()),
        "home": reverse("home"),
        "logout": reverse("logout"),
    }


def roles(request) -> dict:
    """The user's roles, and the top bar's links those roles see (templates/base.html)."""
    held = user_roles(request.user)
    return {
        "roles": {role.value: role in held for role in Role},
        "nav": _nav(held, get_script_prefix()),
    }
