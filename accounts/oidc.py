"""Single sign-on with OpenID Connect, on mozilla-django-oidc: the rules Proofmark adds to it.

- on only when `OIDC_RP_CLIENT_ID` is set (`oidc_configured`); the backend is listed in
  AUTHENTICATION_BACKENDS always and is inert without it;
- the provider's claim `OIDC_ROLE_CLAIM` mapped to roles by `OIDC_ROLE_MAP` (`claim_roles`),
  re-synced at each log-in, and the account found by the provider's subject
  (`accounts.services.oidc_user_sign_in`);
- what the log-in page offers (`login_options`): the "Sign in with ..." link, the password form
  unless PASSWORD_LOGIN is off.
"""

from __future__ import annotations

import logging
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.urls import reverse
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from accounts.services import SignInRefused, oidc_user_sign_in
from core.authentication import ModelBackend
from core.roles import Role

log = logging.getLogger("proofmark.accounts")


def oidc_configured() -> bool:
    return bool(settings.OIDC_RP_CLIENT_ID)


def login_options(next_url: str = "") -> dict:
    """What the log-in page shows: the sign-on link (or None) and whether the password form is
    there."""
    sso = None
    if oidc_configured():
        url = reverse("oidc_authentication_init")
        if next_url:
            url += "?" + urlencode({"next": next_url})
        sso = {"name": settings.OIDC_PROVIDER_NAME, "url": url}
    return {"sso": sso, "password_login": settings.PASSWORD_LOGIN}


def claim_values(claims: dict) -> list[str]:
    """The role claim's values: a list, or a string of values split by spaces or commas."""
    value = claims.get(settings.OIDC_ROLE_CLAIM)
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in value.replace(",", " ").split() if part]
    if isinstance(value, list | tuple):
        return [str(part) for part in value]
    return [str(value)]


def claim_roles(claims: dict) -> frozenset[Role]:
    """The roles OIDC_ROLE_MAP gives the claim's values (a value may map to a role or a list)."""
    roles = set()
    for value in claim_values(claims):
        mapped = settings.OIDC_ROLE_MAP.get(value, [])
        for name in [mapped] if isinstance(mapped, str) else mapped:
            roles.add(Role(name))
    return frozenset(roles)


class OIDCBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend with the account found by the subject and the roles mapped
    (`accounts.services.oidc_user_sign_in`); a refusal is left on the request for the callback
    page (`request.oidc_refusal`). A session's user is read as every session's is
    (core.authentication)."""

    def __init__(self, *args, **kwargs):
        if oidc_configured():
            super().__init__(*args, **kwargs)
        self.UserModel = get_user_model()

    def authenticate(self, request, nonce=None, code_verifier=None):
        # named arguments only: a password log-in's credentials do not reach this backend
        if not oidc_configured() or request is None:
            return None
        return super().authenticate(request, nonce=nonce, code_verifier=code_verifier)

    def verify_claims(self, claims) -> bool:
        return bool(claims.get("sub"))

    def get_or_create_user(self, access_token, id_token, payload):
        claims = self.get_userinfo(access_token, id_token, payload)
        if not self.verify_claims(claims):
            self.request.oidc_refusal = "The provider did not say who you are (no subject)."
            return None
        if claims.get("sub") != payload.get("sub"):
            self.request.oidc_refusal = "The provider's user information is not of your token."
            return None
        try:
            return oidc_user_sign_in(
                subject=str(claims["sub"]),
                username=str(claims.get(settings.OIDC_USERNAME_CLAIM) or ""),
                email=str(claims.get("email") or ""),
                first_name=str(claims.get("given_name") or ""),
                last_name=str(claims.get("family_name") or ""),
                roles=claim_roles(claims),
                require_role=settings.OIDC_REQUIRE_ROLE,
                link_by_username=settings.OIDC_LINK_BY_USERNAME,
            )
        except SignInRefused as refused:
            log.info("single sign-on refused: %s", refused.message)
            self.request.oidc_refusal = refused.message
            return None

    def get_user(self, user_id):
        return ModelBackend().get_user(user_id)
