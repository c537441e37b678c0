"""Who is asking, in one statement: DRF's token authentication reads the token, its user and
the user's groups together, and so does the session backend for pages (the stock classes read
the token or user, then `user_roles` reads the groups: two ORM queries that cost more CPU than a
judgement's own work)."""

from functools import cache

from django.conf import settings
from django.contrib.auth import backends, get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from core.roles import remember_roles
from core.sql import Table, columns, model_from_row
from core.throttles import failed_authentication_count

User = get_user_model()
# The user's columns read here, in the model's order (as `from_db` takes them); the others load
# on first use (nothing on the API path uses them).
_USER_FIELDS, _ = columns(User, "u", ("id", "username", "is_active", "is_superuser"))
# the tables of a user's groups, under the aliases both reads use
_u, _g, _t = Table(User, "u"), Table(Group, "g"), Table(Token, "t")
_ug = Table(User.groups.through, "ug")
_GROUPS_JOIN = f"""LEFT JOIN {_ug} ON {_ug.user_id} = {_u.id}
LEFT JOIN {_g} ON {_g.id} = {_ug.group_id}"""


@cache
def _token_sql() -> str:
    return f"""
SELECT {_u.id}, {_u.username}, {_u.is_active}, {_u.is_superuser}, {_g.name}
FROM {_t}
JOIN {_u} ON {_u.id} = {_t.user_id}
{_GROUPS_JOIN}
WHERE {_t.key} = %s"""


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate(self, request):
        """DRF's, but a refused token counts against its address's rate (core.throttles)."""
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            failed_authentication_count(request)
            raise

    def authenticate_credentials(self, key):
        with connection.cursor() as cursor:
            cursor.execute(_token_sql(), [key])
            rows = cursor.fetchall()
        if not rows:
            raise exceptions.AuthenticationFailed("Invalid token.")
        user_id, username, is_active, is_superuser, _ = rows[0]
        if not is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        read = {
            "id": user_id,
            "username": username,
            "is_active": bool(is_active),
            "is_superuser": bool(is_superuser),
        }
        user = User.from_db(connection.alias, _USER_FIELDS, [read[name] for name in _USER_FIELDS])
        remember_roles(user, (row[4] for row in rows if row[4] is not None))
        return user, Token(key=key, user=user)  # request.auth, as the stock class gives it


@cache
def _session_user_sql() -> tuple[tuple, str]:
    names, select = columns(User, "u")
    return (
        names,
        f"""
SELECT {select}, {_g.name}
FROM {_u}
{_GROUPS_JOIN}
WHERE {_u.id} = %s""",
    )


class ModelBackend(backends.ModelBackend):
    """Django's ModelBackend (AUTHENTICATION_BACKENDS), but a session's user is read with the
    names of their groups, in one statement, and their roles are remembered for the request;
    with PASSWORD_LOGIN off no password logs in (the log-in page's, the admin's, any other)."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if not settings.PASSWORD_LOGIN:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)

    def get_user(self, user_id):
        names, sql = _session_user_sql()
        with connection.cursor() as cursor:
            cursor.execute(sql, [user_id])
            rows = cursor.fetchall()
        if not rows:
            return None
        user = model_from_row(User, names, rows[0][:-1])
        remember_roles(user, (row[-1] for row in rows if row[-1] is not None))
        return user if self.user_can_authenticate(user) else None
