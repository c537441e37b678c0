"""Benchmark: grading over HTTP, as experts' scripts and pages reach the production server.

    DATABASE_URL=postgres://... python benchmarks/bench_http.py [--quick] [--workers 2]

The web process is the Procfile's (`gunicorn --config python:config.gunicorn config.wsgi`, DEBUG off,
persistent database connections, JSON request logs to .run/bench_http_web.log) with
`--workers` workers (default 2: two per core is gunicorn's usual start, and this machine has
two cores), sync unless `--threads` (GUNICORN_THREADS) asks for gthread workers. Like Django's test
runner the script creates a database named bench_<name> beside the one in DATABASE_URL, loads
it, and drops it at the end: real data is never touched.

Data, made as users make it (benchmarks/campaign.py): benchmarks/corpus.py's corpus (real-shaped
proofs of varied length) imported, then a campaign of `--items` items (default 20,000) and one
of 1,000 through the services, with the default 40% double-scored (two experts each), and 17
experts, each a member with an API token and a logged-in session; the texts of their items
rendered ahead, as the worker does when items are made. Experts give varied scores
(mostly near the proof's merit, now and then far off: the agreement rules and adjudication run
as in real use).
Phases (each runs `--seconds` or until its share of the items is used):
1. `next` + `submit`: what a script does today, two round trips per judgement;
2. `submit?next=1`: the submission answers with the next item, one round trip;
3. submissions alone: the items are leased beforehand (not timed), the clients only submit;
4. the grading page alone: each expert opens the page of one item after another of its own
   (leased beforehand), as the browser loads it (the expert's session), nothing else running;
phases 1-3 with 1, 4 and 16 concurrent experts, phase 4 with 4 and 16. Under the 4- and
16-expert loads of phase 2 one more expert works as in the browser, `--page-rate` times a
second (default 2: an expert opens an item every minute or so, so this is the pace of a hundred
experts; 0: without pause): leases its next item (the API's `next`, the service behind the
page's Grade next), loads that item's grading page, submits; its page loads are timed, its CPU
counted in the phase's. Phase 2 with 4 experts runs again on the 1,000-item campaign, page
load and all, to compare with the same phase on the big one. A 429 (throttled) answer is
waited out (Retry-After) and counted. Clients are threads of this process, each keeping its
connection while the server does (sync gunicorn workers close every one); they share the two
cores with the server, so figures are conservative. CPU: the gunicorn workers', the PostgreSQL
backends' (from /proc) and this process's (the clients') over each phase, per judgement (per
page load in phase 4). Prints the machine, date and load average with the figures; results are
appended to benchmarks/RESULTS.md only with `--write`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdb import HERE, OUT, machine_line, setup_django  # noqa: E402
from campaign import judgement, truth_of  # noqa: E402
from corpus import corpus_file  # noqa: E402

setup_django()

from django.db import connection, connections  # noqa: E402
from http_server import Server, backend_pids, postmaster_pid, request, tree_cpu  # noqa: E402

EXPERTS = 16
CONCURRENCY = (1, 4, 16)
SMALL_ITEMS = 1000
PAGE_PHASE = "grading page"


# --- Data -----------------------------------------------------------------------------------


@dataclass
class Fixture:
    big: str
    small: str
    tokens: list[str]
    cookies: list[str]
    users: list


def load(items: int) -> Fixture:
    from campaign import campaign_build

    corpus = corpus_file(items, folder=OUT)
    big = campaign_build(slug="http-big", corpus=corpus, items=items, experts=EXPERTS + 1)
    small = campaign_build(slug="http-small", corpus=corpus, items=SMALL_ITEMS, experts=EXPERTS + 1)
    prerender(big.slug, small.slug)
    print(
        f"{big.items:,} items ({big.double_scored:,} double-scored) and {small.items:,} "
        f"({small.double_scored:,})",
        flush=True,
    )
    return Fixture(
        big=big.slug, small=small.slug, tokens=big.tokens, cookies=big.cookies, users=big.experts
    )


def prerender(*slugs: str) -> None:
    """What the worker does when items are made (problems.services.texts_prerender, queued by
    items_create_from_selection), done here before the phases as a worker would have done it
    between the campaign's creation and its grading: the pages read the stored renderings."""
    from annotation.models import Item

    try:
        from problems.services import texts_prerender
    except ImportError:  # a tree from before stored renderings (make bench BASE=...)
        print("no rendering ahead in this tree: the pages render as they load", flush=True)
        return
    started = time.process_time()
    proof_ids = list(
        Item.objects.filter(campaign__slug__in=slugs).values_list("proof_id", flat=True)
    )
    texts_prerender(proof_ids=proof_ids)
    print(
        f"texts of {len(proof_ids):,} items rendered ahead: "
        f"{time.process_time() - started:.1f} s of CPU",
        flush=True,
    )


def analyse() -> None:
    """Fresh planner statistics before a phase, as autovacuum keeps them on a live database (it
    looks once a minute; a phase is shorter). Without it a phase would run on statistics taken
    when the assignments table was empty: PostgreSQL plans a prepared statement once per
    connection, until an ANALYZE invalidates the plan, so the leases' candidate query would read
    every assignment per item it considers until autovacuum's next pass."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def prelease(fixture: Fixture, clients: int, per_client: int) -> list[list[int]]:
    """Leases `per_client` items of the big campaign to each of the first `clients` experts,
    as `next` would have (not timed): what phase 3 submits."""
    from django.utils import timezone

    from annotation.models import Assignment, Item

    free = list(
        Item.objects.filter(campaign__slug=fixture.big, needs_work=True)
        .exclude(assignments__isnull=False)
        .order_by("-pk")
        .values_list("pk", flat=True)[: clients * per_client]
    )
    until = timezone.now() + timedelta(hours=2)
    mine = [free[i::clients] for i in range(clients)]
    Assignment.objects.bulk_create(
        Assignment(item_id=pk, expert=fixture.users[i], leased_until=until)
        for i, pks in enumerate(mine)
        for pk in pks
    )
    return mine


def hand_back(leased: list[list[int]]) -> None:
    """The leased items a phase left unsubmitted, handed back as experts who stop hand theirs
    back (released). Left active, the grading-page phases' 2,000 two-hour leases to each of the
    first experts stayed with them for the rest of the run, which no expert working through the
    page or the API ends up holding, and the later phases paid for them."""
    from annotation.models import Assignment, AssignmentStatus

    Assignment.objects.filter(
        item_id__in=[pk for pks in leased for pk in pks], status=AssignmentStatus.ACTIVE
    ).update(status=AssignmentStatus.RELEASED)


# --- Clients --------------------------------------------------------------------------------


@dataclass
class Tally:
    judgements: int = 0
    throttled: int = 0
    cycles: list[float] = field(default_factory=list)  # seconds per judgement, all its requests
    requests: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Expert:
    """One expert's script: its own token, one request at a time."""

    def __init__(self, port: int, token: str, tally: Tally):
        self.port, self.tally = port, tally
        self.conn: http.client.HTTPConnection | None = None
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        self.rng = random.Random(token)

    def body(self, item: int) -> str:
        """This expert's judgement of the item: near the proof's merit (the same for every
        expert, drawn from the item's id), sometimes one off, now and then far off."""
        score = judgement(self.rng, truth_of(random.Random(item)))
        return json.dumps({"score": score, "comment": "Checked each step.", "seconds_spent": 240})

    def send(self, method: str, path: str, body=None) -> tuple[int, bytes]:
        """One request on the expert's connection, kept open while the server keeps it (gthread
        workers do; sync workers close every connection), as an HTTP client library does."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            self.conn.request(method, path, body=body, headers=self.headers)
            response = self.conn.getresponse()
            raw = response.read()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.conn.close()  # closed by the server while idle: once more on a new one
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            self.conn.request(method, path, body=body, headers=self.headers)
            response = self.conn.getresponse()
            raw = response.read()
        if response.will_close:
            self.conn.close()
            self.conn = None
        if response.status == 429:
            raw = (response.getheader("Retry-After") or "0.2").encode()
        return response.status, raw

    def call(self, method: str, path: str, body=None) -> dict:
        while True:
            start = time.perf_counter()
            status, raw = self.send(method, path, body)
            elapsed = time.perf_counter() - start
            if status == 429:
                with self.tally.lock:
                    self.tally.throttled += 1
                time.sleep(min(float(raw), 5.0))
                continue
            if status != 200:
                raise RuntimeError(f"{method} {path}: {status} {raw[:300]!r}")
            self.tally.requests.append(elapsed)
            return json.loads(raw)

    def next_item(self, slug: str) -> int | None:
        body = self.call("POST", f"/api/v1/campaigns/{slug}/next/")
        return body["item"]["id"] if "item" in body else None

    def done(self, started: float) -> None:
        with self.tally.lock:
            self.tally.judgements += 1
            self.tally.cycles.append(time.perf_counter() - started)

    def two_trips(self, slug: str, until: float, limit: int) -> None:
        while time.perf_counter() < until and self.tally.judgements < limit:
            started = time.perf_counter()
            item = self.next_item(slug)
            if item is None:
                return
            self.call("POST", f"/api/v1/items/{item}/submit/", self.body(item))
            self.done(started)

    def one_trip(self, slug: str, until: float, limit: int) -> None:
        item = self.next_item(slug)  # the first item, as a script starts (not timed)
        while item is not None and time.perf_counter() < until and self.tally.judgements < limit:
            started = time.perf_counter()
            answer = self.call("POST", f"/api/v1/items/{item}/submit/?next=1", self.body(item))
            self.done(started)
            item = answer["next"]["item"]["id"] if "item" in answer["next"] else None

    def submit_only(self, items: list[int], until: float, limit: int) -> None:
        for item in items:
            if time.perf_counter() >= until or self.tally.judgements >= limit:
                return
            started = time.perf_counter()
            self.call("POST", f"/api/v1/items/{item}/submit/", self.body(item))
            self.done(started)

    def page(self, item: int, cookie: str) -> float:
        """The grading page of the item, as the browser loads it with the expert's session."""
        started = time.perf_counter()
        status, _ = request(
            self.port, "GET", f"/annotation/items/{item}/", headers={"Cookie": cookie}
        )
        if status != 200:
            raise RuntimeError(f"grading page of item {item}: {status}")
        return time.perf_counter() - started

    def pages_only(self, items: list[int], cookie: str, until: float, limit: int) -> None:
        for item in items:
            if time.perf_counter() >= until or self.tally.judgements >= limit:
                return
            started = time.perf_counter()
            self.page(item, cookie)
            self.done(started)

    def browse(self, slug: str, cookie: str, times: list[float], stop, rate: float) -> None:
        """An expert in the browser: the next item, its grading page, the submission."""
        while not stop.is_set():
            started = time.perf_counter()
            item = self.next_item(slug)
            if item is None:
                return
            times.append(self.page(item, cookie))
            self.call("POST", f"/api/v1/items/{item}/submit/", self.body(item))
            if rate > 0:  # the next item on the clock, not right after this one
                stop.wait(max(0.0, started + 1 / rate - time.perf_counter()))


@dataclass
class Result:
    phase: str
    clients: int
    campaign: str
    judgements: int
    seconds: float
    p50_ms: float
    p95_ms: float
    web_cpu_ms: float
    client_cpu_ms: float
    db_cpu_ms: float
    throttled: int
    page_p50_ms: float | None = None
    page_p95_ms: float | None = None
    pages: int = 0

    @property
    def rate(self) -> float:
        return self.judgements / self.seconds


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def run_phase(
    server: Server,
    fixture: Fixture,
    *,
    phase: str,
    clients: int,
    slug: str,
    seconds: float,
    limit: int,
    database: str,
    page: bool = False,
    page_rate: float = 2.0,
    leased: list[list[int]] | None = None,
) -> Result:
    tally = Tally()
    experts = [Expert(server.port, fixture.tokens[i], tally) for i in range(clients)]
    stop = threading.Event()
    page_times: list[float] = []

    browser = Expert(server.port, fixture.tokens[EXPERTS], Tally())

    errors: list[BaseException] = []

    def guarded(target, *args) -> None:
        try:
            target(*args)
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    postmaster = postmaster_pid()

    def web_cpu_now() -> float:
        return tree_cpu(server.proc.pid, server.workers())

    def db_cpu_now() -> float:
        return tree_cpu(postmaster, backend_pids(database))

    cpu_before = web_cpu_now(), db_cpu_now(), time.process_time()
    started = time.perf_counter()
    until = started + seconds
    threads = []
    for index, expert in enumerate(experts):
        if phase == "next + submit":
            args = (expert.two_trips, slug, until, limit)
        elif phase == "submit?next=1":
            args = (expert.one_trip, slug, until, limit)
        elif phase == PAGE_PHASE:
            args = (expert.pages_only, leased[index], fixture.cookies[index], until, limit)
        else:
            args = (expert.submit_only, leased[index], until, limit)
        threads.append(threading.Thread(target=guarded, args=args))
    pager = None
    if page:
        pager = threading.Thread(
            target=guarded,
            args=(browser.browse, slug, fixture.cookies[EXPERTS], page_times, stop, page_rate),
        )
    for thread in threads + ([pager] if pager else []):
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    stop.set()
    if pager:
        pager.join()
    web_cpu = web_cpu_now() - cpu_before[0]
    db_cpu = db_cpu_now() - cpu_before[1]
    client_cpu = time.process_time() - cpu_before[2]
    if errors:
        raise errors[0]
    count = max(tally.judgements, 1)
    return Result(
        phase=phase,
        clients=clients,
        campaign=slug,
        judgements=tally.judgements,
        seconds=elapsed,
        p50_ms=percentile(tally.cycles, 0.5),
        p95_ms=percentile(tally.cycles, 0.95),
        web_cpu_ms=web_cpu / count * 1000,
        client_cpu_ms=client_cpu / count * 1000,
        db_cpu_ms=db_cpu / count * 1000,
        throttled=tally.throttled,
        page_p50_ms=percentile(page_times, 0.5) if page_times else None,
        page_p95_ms=percentile(page_times, 0.95) if page_times else None,
        pages=len(page_times),
    )


# --- Report ---------------------------------------------------------------------------------


def report(
    results: list[Result],
    *,
    machine: str,
    items: int,
    workers: int,
    threads: int,
    page_rate: float,
    quick: bool,
    load_avg: str,
    web: str,
) -> str:
    pace = f"{page_rate:g} a second" if page_rate > 0 else "one item after another"
    kind = f"{threads}-thread gthread" if threads > 1 else "sync"
    lines = [
        "",
        f"## Grading over HTTP (`bench_http.py`{' --quick' if quick else ''})",
        "",
        f"Machine: {machine}; PostgreSQL on the same machine; gunicorn {workers} {kind} "
        f"workers (the Procfile's `web`, DEBUG off, persistent connections, JSON request logs); "
        f"load average over the run {load_avg}; web processes: {web}. Campaigns of {items:,} and {SMALL_ITEMS:,} items "
        "made through the services (40% double-scored); clients are threads of the benchmark on "
        "the same cores. Under the 4- and 16-expert loads of `submit?next=1` one more expert "
        f"works in the browser (next, grading page, submit), {pace}; the `{PAGE_PHASE}` rows "
        "count page loads, not judgements.",
        "",
        "| phase | experts | campaign | judgements/s | p50 | p95 | web CPU / judgement "
        "| PostgreSQL CPU / judgement | clients' CPU / judgement | grading page p50 / p95 (loads) | 429s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        page = f"{r.page_p50_ms:.0f} / {r.page_p95_ms:.0f} ms ({r.pages})" if r.pages else ""
        lines.append(
            f"| {r.phase} | {r.clients} | {r.campaign} ({r.judgements}) | {r.rate:.0f} | "
            f"{r.p50_ms:.1f} ms | {r.p95_ms:.1f} ms | {r.web_cpu_ms:.1f} ms | "
            f"{r.db_cpu_ms:.1f} ms | {r.client_cpu_ms:.1f} ms | {page} | {r.throttled} |"
        )
    small = next((r for r in results if r.campaign == "http-small"), None)
    one_trip = {
        r.clients: r for r in results if r.phase == "submit?next=1" and r is not small
    }  # fmt: skip
    lines += [
        "",
        "Errors: 0 (every answer was a 200 or a 429, counted and waited out; any other answer "
        "stops the benchmark). p50 / p95: per judgement, all of its requests (two for "
        "`next + submit`), or per page load. Targets (issue 27): `next + submit` >= 200/s and `submit?next=1` >= 300/s with 4 "
        "and 16 experts, p95 < 100 ms, web CPU < 4 ms a `?next=1` judgement; the grading page "
        f"< 5 ms of web CPU a load, p95 < 100 ms with 16 experts; 1,000 vs {items:,} items "
        "within 10%"
        + (
            f" (submit?next=1, 4 experts: {small.rate:.0f} vs {one_trip[4].rate:.0f}/s, "
            f"{small.rate / one_trip[4].rate - 1:+.0%})."
            if small and 4 in one_trip
            else "."
        ),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3,000 items, 3 s a phase")
    parser.add_argument("--items", type=int, help="items of the big campaign (default 20,000)")
    parser.add_argument("--seconds", type=float, help="longest run of a phase (default 8)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (default 2)")
    parser.add_argument(
        "--threads", type=int, default=int(os.environ.get("GUNICORN_THREADS", "1")),
        help="threads a worker (GUNICORN_THREADS; more than 1: gthread workers, keep-alive)",
    )  # fmt: skip
    parser.add_argument("--port", type=int, default=int(os.environ.get("BENCH_HTTP_PORT", 8765)))
    parser.add_argument(
        "--page-rate", type=float, default=2.0,
        help="grading page loads a second under load (default 2; 0: one after another)",
    )  # fmt: skip
    parser.add_argument("--write", action="store_true", help="append the table to RESULTS.md")
    parser.add_argument("--json", type=Path, help="also write the figures there (JSON)")
    args = parser.parse_args()
    items = args.items or (3000 if args.quick else 20000)
    seconds = args.seconds or (3.0 if args.quick else 8.0)
    # Each of the 11 phases on the big campaign may use a tenth of it (there are 1.4 judgements
    # an item); the small one, 80%.
    limit = items // 10

    original = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_http_{original}"
    database = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    settings = connection.settings_dict
    url = (
        f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:"
        f"{settings['PORT'] or 5432}/{database}"
    )
    server = None
    try:
        print(f"loading {items:,} + {SMALL_ITEMS:,} items into {database}", flush=True)
        fixture = load(items)
        server = Server(args.port, args.workers, args.threads, url)
        first_workers = server.workers()
        machine = machine_line()
        load_start = os.getloadavg()[0]
        results = []
        for phase in ("next + submit", "submit?next=1", "submissions alone"):
            for clients in CONCURRENCY:
                leased = None
                if phase == "submissions alone":
                    leased = prelease(fixture, clients, limit // clients + 1)
                analyse()
                result = run_phase(
                    server, fixture, phase=phase, clients=clients, slug=fixture.big,
                    seconds=seconds, limit=limit, database=database,
                    page=phase == "submit?next=1" and clients > 1, page_rate=args.page_rate,
                    leased=leased,
                )  # fmt: skip
                print(f"{phase}, {clients} experts: {result.rate:.0f}/s", flush=True)
                results.append(result)
                if leased:
                    hand_back(leased)
        for clients in CONCURRENCY[1:]:
            leased = prelease(fixture, clients, limit // clients + 1)
            analyse()
            result = run_phase(
                server, fixture, phase=PAGE_PHASE, clients=clients, slug=fixture.big,
                seconds=seconds, limit=limit, database=database, leased=leased,
            )  # fmt: skip
            print(f"{PAGE_PHASE}, {clients} experts: {result.rate:.0f} loads/s", flush=True)
            results.append(result)
            hand_back(leased)
        analyse()
        small = run_phase(
            server, fixture, phase="submit?next=1", clients=4, slug=fixture.small,
            seconds=seconds, limit=int(SMALL_ITEMS * 0.8), database=database, page=True,
            page_rate=args.page_rate,
        )  # fmt: skip
        results.append(small)
        load_avg = f"{load_start:.1f} -> {os.getloadavg()[0]:.1f}"
        replaced = len(set(server.seen) - set(first_workers))
        web = f"peak RSS {server.peak_mb():.0f} MB, workers replaced after max_requests, as seen between phases: {replaced}"
    finally:
        if server:
            server.stop()
        connections.close_all()
        connection.creation.destroy_test_db(original, verbosity=0)
    text = report(
        results, machine=machine, items=items, workers=args.workers, threads=args.threads,
        page_rate=args.page_rate, quick=args.quick, load_avg=load_avg, web=web,
    )  # fmt: skip
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        figures = [{**asdict(r), "rate": r.rate} for r in results]
        args.json.write_text(json.dumps({"machine": machine, "items": items, "results": figures}))
    if args.write:
        with (HERE / "RESULTS.md").open("a") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
