"""Django's PostgreSQL backend, with a health check that costs no round trip.

A connection kept between requests (`DB_CONN_MAX_AGE`) is checked before a request first uses
it (`CONN_HEALTH_CHECKS`); Django's check sends `SELECT 1` and waits for the answer, a round trip
on every request. A connection the server has closed since its last answer (a restart, a
terminated backend, a pooler's idle timeout) has the server's goodbye waiting on its socket: the
error message, then the end of the stream. So a connection that is idle outside a transaction
with nothing to read on its socket is taken as healthy without asking; anything else (something
to read, a transaction left open, a bad status) is asked with Django's `SELECT 1`, and closed if
that fails. `is_usable` itself, which the outage handling calls after an error
(`core.errors`), still asks the server."""

import select

import psycopg
from django.db.backends.postgresql import base
from psycopg import pq


def _nothing_to_read(fd: int) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
    return not poller.poll(0)


class DatabaseWrapper(base.DatabaseWrapper):
    def close_if_health_check_failed(self):
        if (
            self.health_check_enabled
            and not self.health_check_done
            and self.connection is not None
            and not self.pool
            and self.quiet()
        ):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()

    def quiet(self) -> bool:
        """Whether the open connection is idle outside a transaction with nothing from the
        server on its socket since its last answer (what a connection the server closed is not)."""
        pgconn = self.connection.pgconn
        try:
            return (
                pgconn.status == pq.ConnStatus.OK
                and pgconn.transaction_status == pq.TransactionStatus.IDLE
                and _nothing_to_read(pgconn.socket)
            )
        except (OSError, ValueError, psycopg.Error):  # no socket left: not quiet, ask
            return False
