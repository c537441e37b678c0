"""The session engine (SESSION_ENGINE): Django's database sessions, read by one hand-written
statement. Every page request reads its session; the ORM's `get` compiled that read on each of
them, and cost about a tenth of a grading page's CPU. Writes, expiry and clearing are Django's."""

from django.contrib.sessions.backends import db
from django.db import connections, router
from django.utils import timezone


class SessionStore(db.SessionStore):
    def load(self) -> dict:
        """The session's data; {} and no key when it is missing or expired (as Django's)."""
        connection = connections[router.db_for_read(self.model)]
        if self.session_key is None:  # SessionBase drops a malformed key
            return {}
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT session_data FROM {connection.ops.quote_name(self.model._meta.db_table)} "
                "WHERE session_key = %s AND expire_date > %s",
                [self.session_key, connection.ops.adapt_datetimefield_value(timezone.now())],
            )
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return {}
        return self.decode(row[0])
