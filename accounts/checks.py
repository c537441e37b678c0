"""System checks of the accounts app's settings (registered in AccountsConfig.ready)."""

from django.conf import settings
from django.core import checks

from core.roles import Role


def role_map_check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """Every role OIDC_ROLE_MAP names is one of Proofmark's."""
    known = {role.value for role in Role}
    wrong = []
    for value, mapped in settings.OIDC_ROLE_MAP.items():
        for name in [mapped] if isinstance(mapped, str) else mapped:
            if name not in known:
                wrong.append(f"{value!r} -> {name!r}")
    if not wrong:
        return []
    return [
        checks.Error(
            f"OIDC_ROLE_MAP names roles Proofmark lacks: {', '.join(wrong)} "
            f"(the roles: {', '.join(sorted(known))}).",
            id="accounts.E001",
        )
    ]
