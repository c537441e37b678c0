"""Profile: a judgement over the token API inside one process, where its web CPU goes.

    DATABASE_URL=postgres://... python benchmarks/profile_judgement.py [--judgements 300]
        [--items 2000] [--top 25] [--path submit-next|next+submit|page] [--sql] [--save FILE]

The request path is production's: the project's settings with DEBUG off (benchdb.setup_django),
the same middleware, persistent database connection, the request log written (to /dev/null
here, where gunicorn sends it to its error log), every request a WSGI call of
`config.wsgi.application` as gunicorn makes it (no test client: its signals and CSRF switch are
not on the path). The data are built as benchmarks/campaign.py builds them (the corpus imported,
a campaign of `--items` items, 40% double-scored, experts with API tokens) in a database of its
own beside DATABASE_URL's (`<name>_profile`, kept between runs; the campaign is rebuilt each
run). One expert's script then does what bench_http.py's clients do: `submit?next=1` (default),
or `next` and then `submit`, a judgement after the other. (A gunicorn worker serving one such
client spent 7.7-8.0 ms of CPU a `submit?next=1` judgement where this loop spent 7.4-8.6 ms,
2026-12-04: the in-process figure is the web process's.)

Printed per judgement: the process's CPU (ms, over `--judgements` judgements, no profiler, the
median of three slices), statements (a connection execute wrapper; the health check's
`SELECT 1` on the raw connection is not among them) and, with cProfile (on the CPU clock) over
as many more, the function calls (the robust figure on a noisy machine: the same code gives the
same count), grouped by where the function lives: django core, sessions, middleware (Django's
and other libraries'), csp, DRF, psycopg, our apps, the standard library and built-ins; then
the `--top` functions by own time, by calls and by cumulative time. `--sql` prints first
the statements of a judgement (a page load), each with its median wall time over as many. Set PROOFMARK_BENCH_TREE to profile another tree
(benchmarks/benchdb.py), e.g. the starting code's worktree, in alternating rounds.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import logging
import os
import pstats
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdb import OUT, ROOT, machine_line, setup_django  # noqa: E402

setup_django()

from django.db import connection  # noqa: E402

GROUPS = (  # (group, what its file path holds), first match wins
    ("sessions", "/django/contrib/sessions/"),
    ("middleware", "/django/middleware/"),
    ("middleware", "/django/contrib/auth/middleware"),
    ("middleware", "/django/contrib/messages/"),
    ("middleware", "/django_htmx/"),
    ("middleware", "/whitenoise/"),
    ("middleware", "/axes/"),
    ("csp", "/csp/"),
    ("django core", "/django/"),
    ("DRF", "/rest_framework/"),
    ("psycopg", "/psycopg"),
)


def group_of(filename: str) -> str:
    if filename == "~" or filename.startswith("<"):
        return "built-ins"
    for name, part in GROUPS:
        if part in filename:
            return name
    if filename.startswith(str(ROOT)) and "/.venv/" not in filename:
        return "our apps"
    if "site-packages" in filename:
        return "other libraries"
    return "stdlib"


class Script:
    """One expert's script: WSGI calls of the application with its token."""

    def __init__(self, token: str, slug: str, cookie: str):
        from config.wsgi import application

        self.app, self.token, self.slug, self.cookie = application, token, slug, cookie
        self.item: int | None = None
        self.pages: list[int] = []  # --path page: the items leased to the expert, to load

    def call(self, method: str, path: str, query: str = "", body: bytes = b"") -> dict:
        status, raw = self.wsgi(
            method, path, query, body, {"HTTP_AUTHORIZATION": f"Token {self.token}"}
        )
        if not status.startswith("200"):
            raise SystemExit(f"{method} {path}?{query}: {status} {raw[:300]!r}")
        return json.loads(raw)

    def wsgi(
        self, method: str, path: str, query: str, body: bytes, headers: dict
    ) -> tuple[str, bytes]:
        environ = {
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": "",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)),
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1",
            **headers,
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        status = []
        chunks = self.app(environ, lambda s, headers, exc_info=None: status.append(s))
        raw = b"".join(chunks)
        if hasattr(chunks, "close"):
            chunks.close()
        return status[0], raw

    def body(self) -> bytes:
        score = self.item % 8
        return json.dumps(
            {"score": score, "comment": "Checked each step.", "seconds_spent": 240}
        ).encode()

    def lease(self) -> None:
        answer = self.call("POST", f"/api/v1/campaigns/{self.slug}/next/")
        self.item = answer["item"]["id"] if "item" in answer else None

    def submit_next(self) -> None:
        answer = self.call("POST", f"/api/v1/items/{self.item}/submit/", "next=1", self.body())
        self.item = answer["next"]["item"]["id"] if "item" in answer["next"] else None

    def next_submit(self) -> None:
        self.call("POST", f"/api/v1/items/{self.item}/submit/", "", self.body())
        self.lease()

    def page(self) -> None:
        """The grading page of the next leased item, as the browser loads it (the session)."""
        item = self.pages.pop()
        status, raw = self.wsgi(
            "GET", f"/annotation/items/{item}/", "", b"", {"HTTP_COOKIE": self.cookie}
        )
        if not status.startswith("200"):
            raise SystemExit(f"grading page of item {item}: {status} {raw[:300]!r}")
        self.item = self.pages[-1] if self.pages else None

    def judge(self, count: int, how: str) -> None:
        step = {
            "submit-next": self.submit_next,
            "next+submit": self.next_submit,
            "page": self.page,
        }[how]
        for _ in range(count):
            if self.item is None:
                raise SystemExit("the campaign ran out of items: give --items more")
            step()


def lease_ahead(built, count: int) -> list[int]:
    """`count` items of the campaign leased to its first expert, as `next` would have."""
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Assignment, Item

    free = list(
        Item.objects.filter(campaign__slug=built.slug, needs_work=True)
        .order_by("pk")
        .values_list("pk", flat=True)[:count]
    )
    expert = built.experts[0]
    until = timezone.now() + timedelta(hours=2)
    Assignment.objects.bulk_create(
        Assignment(item_id=pk, expert=expert, leased_until=until) for pk in free
    )
    return free


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judgements", type=int, default=300)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sql", action="store_true", help="print the statements, timed")
    parser.add_argument(
        "--path", choices=("submit-next", "next+submit", "page"), default="submit-next"
    )
    parser.add_argument("--save", type=Path, help="write the cProfile stats to this file")
    args = parser.parse_args()

    from django.core.management import call_command

    connection.settings_dict.setdefault("TEST", {})["NAME"] = (
        connection.settings_dict["NAME"] + "_profile"
    )
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=True)
    call_command("migrate", verbosity=0)  # a kept database from older code
    from campaign import campaign_build
    from corpus import corpus_file

    from annotation.models import Item

    needed = (4 if args.sql else 2) * args.judgements + 50
    if args.items < needed:
        sys.exit(f"--items must be at least {needed} for {args.judgements} judgements")
    built = campaign_build(
        slug="profile", corpus=corpus_file(args.items, folder=OUT), items=args.items, experts=2
    )
    script = Script(built.tokens[0], built.slug, built.cookies[0])  # loads config.wsgi (logging)
    for handler in logging.getLogger().handlers:  # the request log, written as in production
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(open(os.devnull, "w"))  # noqa: SIM115 (open for the process)
    if args.path == "page":  # as bench_http.py's page phase: rendered and leased beforehand
        from problems.services import texts_prerender

        script.pages = lease_ahead(built, needed)
        texts_prerender(
            proof_ids=list(
                Item.objects.filter(pk__in=script.pages).values_list("proof_id", flat=True)
            )
        )
        script.item = script.pages[-1]
    else:
        script.lease()
    script.judge(20, args.path)  # warm: imports, prepared statements, caches

    if args.sql:  # each statement, with its median wall time over --judgements runs
        walls: dict[str, list[float]] = {}

        def timed(execute, sql, params, many, context):
            started = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                walls.setdefault(sql, []).append((time.perf_counter() - started) * 1000)

        with connection.execute_wrapper(timed):
            script.judge(args.judgements, args.path)
        for sql, times in walls.items():
            print(
                f"-- {len(times) / args.judgements:.2f} a {args.path}, median {statistics.median(times):.3f} ms wall"
            )
            print(" ".join(sql.split()) + "\n")

    third = args.judgements // 3
    slices = []
    for _ in range(3):
        started = time.process_time()
        script.judge(third, args.path)
        slices.append((time.process_time() - started) * 1000 / third)
    cpu = statistics.median(slices)

    statements = 0

    def count(execute, sql, params, many, context):
        nonlocal statements
        statements += 1
        return execute(sql, params, many, context)

    profile = cProfile.Profile(time.process_time)  # CPU, not waits on the database
    with connection.execute_wrapper(count):
        profile.enable()
        script.judge(args.judgements, args.path)
        profile.disable()
    stats = pstats.Stats(profile)
    if args.save:
        stats.dump_stats(args.save)

    calls, own = Counter(), Counter()
    for (filename, _, _), (_, ncalls, tottime, _, _) in stats.stats.items():
        group = group_of(filename)
        calls[group] += ncalls
        own[group] += tottime
    n = args.judgements
    print(machine_line())
    each = "page load" if args.path == "page" else "judgement"
    print(f"tree {ROOT}; {args.path}; {n} {each}s on a {built.items:,}-item campaign")
    print(
        f"CPU {cpu:.2f} ms a {each} (slices {', '.join(f'{s:.2f}' for s in slices)}); "
        f"{statements / n:.2f} statements; {sum(calls.values()) / n:,.0f} calls a {each}"
    )
    print(f"{'group':<16}{'calls':>9}{'own ms*':>9}   (*CPU under the profiler)")
    for group, total in calls.most_common():
        print(f"{group:<16}{total / n:>9,.0f}{own[group] * 1000 / n:>9.2f}")
    for key in ("tottime", "ncalls", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(key).print_stats(args.top)
        text = out.getvalue()
        print(f"\n--- top {args.top} by {key} (over {n} {each}s)")
        print(text[text.find("   ncalls") :].replace(str(ROOT) + "/", "").rstrip())


if __name__ == "__main__":
    main()
