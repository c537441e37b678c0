"""Writes of the accounts app: a single sign-on's account and its roles."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import OIDCIdentity
from core.roles import Role

NO_ROLE = (
    "Your account at the provider holds no group that gives a role in Proofmark: "
    "ask an admin to add you to one."
)


@dataclass(frozen=True)
class SignInRefused(Exception):
    """Why a single sign-on may not log in; the log-in page says it."""

    message: str


def user_roles_sync(*, user: AbstractBaseUser, roles: frozenset[Role]) -> None:
    """The user's role groups become exactly `roles`; groups that are no role stay."""
    role_names = {role.value for role in Role}
    wanted = {role.value for role in roles}
    for name in wanted:
        Group.objects.get_or_create(name=name)
    held = set(user.groups.filter(name__in=role_names).values_list("name", flat=True))
    if held - wanted:
        user.groups.remove(*Group.objects.filter(name__in=held - wanted))
    if wanted - held:
        user.groups.add(*Group.objects.filter(name__in=wanted - held))


def oidc_user_sign_in(
    *,
    subject: str,
    username: str,
    email: str,
    first_name: str,
    last_name: str,
    roles: frozenset[Role],
    require_role: bool,
    link_by_username: bool,
) -> AbstractBaseUser:
    """The account the provider's `subject` signs in as: found by its identity, else made (or,
    with `link_by_username`, a local account of that name taken over once), its name, address
    and roles brought up to the provider's. Raises SignInRefused."""
    with transaction.atomic():
        user = _signed_in(
            subject=subject,
            username=username,
            details={"email": email, "first_name": first_name, "last_name": last_name},
            roles=roles,
            require_role=require_role,
            link_by_username=link_by_username,
        )
    if require_role and not roles:  # an account that had roles has lost them (committed above)
        raise SignInRefused(NO_ROLE)
    return user


def _signed_in(
    *,
    subject: str,
    username: str,
    details: dict[str, str],
    roles: frozenset[Role],
    require_role: bool,
    link_by_username: bool,
) -> AbstractBaseUser:
    User = get_user_model()
    identity = (
        OIDCIdentity.objects.select_for_update().select_related("user").filter(subject=subject)
    ).first()
    if identity is not None:
        user = identity.user
    elif require_role and not roles:  # no account is made for it
        raise SignInRefused(NO_ROLE)
    else:
        if not username:
            raise SignInRefused("The provider did not give a user name for your account.")
        user = User.objects.filter(username=username).first()
        if user is not None and not (link_by_username and not hasattr(user, "oidc_identity")):
            raise SignInRefused(
                f"A Proofmark account named {username!r} exists already and is not linked to "
                "your sign-on: ask an admin."
            )
        if user is None:
            user = User(username=username)
            user.set_unusable_password()
            try:
                user.full_clean(exclude=["password"])
            except ValidationError as error:
                raise SignInRefused(
                    f"Your user name at the provider, {username!r}, cannot be used here: "
                    + " ".join(error.messages)
                ) from None
            user.save()
        identity = OIDCIdentity.objects.create(user=user, subject=subject)
    changed = {name: value for name, value in details.items() if getattr(user, name) != value}
    if changed:
        for name, value in changed.items():
            setattr(user, name, value)
        user.save(update_fields=list(changed))
    identity.save(update_fields=["last_login_at"])
    user_roles_sync(user=user, roles=roles)
    return user
