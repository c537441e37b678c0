"""Roles are Django groups; these helpers are the one place that reads them.

Superusers count as admins. Campaign membership (annotation) narrows what an expert or an
adjudicator works on; the group gives the baseline capability checked here.
"""

from collections.abc import Callable, Iterable
from enum import StrEnum
from functools import wraps

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission


class Role(StrEnum):
    ADMIN = "admin"
    EXPERT = "expert"
    ADJUDICATOR = "adjudicator"
    RESEARCHER = "researcher"


def user_roles(user: AbstractBaseUser | AnonymousUser) -> frozenset[Role]:
    if not user.is_authenticated:
        return frozenset()
    cached = getattr(user, "_proofmark_roles", None)
    if cached is not None:
        return cached
    return remember_roles(user, user.groups.values_list("name", flat=True))


def remember_roles(user: AbstractBaseUser, group_names: Iterable[str]) -> frozenset[Role]:
    """The user's roles from the names of their groups, kept on the user object for the request
    (core.authentication reads the names with the user)."""
    names = set(group_names)
    roles = {role for role in Role if role.value in names}
    if user.is_superuser:
        roles.add(Role.ADMIN)
    user._proofmark_roles = frozenset(roles)
    return user._proofmark_roles


def has_role(user: AbstractBaseUser | AnonymousUser, *roles: Role) -> bool:
    return bool(user_roles(user) & set(roles))


def ensure_role_groups() -> None:
    for role in Role:
        Group.objects.get_or_create(name=role.value)


def role_required(*roles: Role) -> Callable:
    """View decorator: the user must hold one of `roles` (log-in is enforced by middleware)."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not has_role(request.user, *roles):
                raise PermissionDenied("Your role does not allow this page.")
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def api_permission(*roles: Role) -> type[BasePermission]:
    """A DRF permission class admitting authenticated users that hold one of `roles`."""

    class HasRole(BasePermission):
        message = "Your role does not allow this operation."

        def has_permission(self, request, view) -> bool:
            return has_role(request.user, *roles)

    HasRole.__name__ = "HasRole_" + "_".join(role.value for role in roles)
    return HasRole


ALL_ROLES: Iterable[Role] = tuple(Role)
# Any role at all: the API schema and its docs are not for users without one.
AnyRole = api_permission(*ALL_ROLES)
