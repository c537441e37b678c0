"""Benchmark: does the grading page and `submit?next=1` cost the same on a 100,000-item campaign as
on a 1,000-item one (issue 40)?

    DATABASE_URL=postgres://... python benchmarks/bench_scale.py [--quick] [--items 100000]

Data, made as users make it (benchmarks/campaign.py's campaign_build): benchmarks/corpus.py's
corpus imported, a campaign of `--items` items and one of 1,000 (40% double-scored), the same five
experts members of both; then a fifth of the judgements each campaign needs (JUDGED) through the
services (`assignment_next`, `grade_submit`), four experts taking turns: both campaigns a fifth
done, the experts' histories as long as such a campaign makes them. The data lives in a database
of its own, bench_scale_<name>_<items>_<share> beside the one in DATABASE_URL, kept between runs
(built once, 20 minutes at 100,000 items on a 2-core machine; a later run only migrates it; drop
it when done): each measurement runs in a transaction that is rolled back, so every run, of any
tree (PROOFMARK_BENCH_TREE), starts from the same rows.

For each campaign and each of two experts (a veteran, who made a quarter of the judgements, and
a newcomer) the expert does what the browser does, `--loads` times: load the grading page of the
item they hold (the session cookie, django.test.Client in this process, DEBUG off), then submit
it through the token API with `?next=1`, which leases the next. The texts are rendered ahead (as
the worker does when items are made, in another process: not in this one's memory). Twice:
1. timed: this process's CPU (the web side) and the CPU of its PostgreSQL backend (/proc, in
   clock ticks: a figure of 30 loads moves by 0.3 ms a tick), per page load and per submission;
2. captured: every statement (CaptureQueriesContext), each then run again under
   EXPLAIN (ANALYZE, BUFFERS) in a savepoint rolled back: its execution time, the buffers it
   touched and the rows its plan's scans of items, assignments, grades and adjudication tables
   visited.
Printed: per expert, path and campaign the CPU, statements and EXPLAIN time a load, and each
statement (by shape: numbers and strings taken out) whose buffers, rows or time grow from the
small campaign to the big one. `--profile` instead: the small campaign's page, its Python calls
a load by package (cProfile; a call of the standard library or a built-in counts for the package
that made it) and its CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import defaultdict
from decimal import Decimal
from functools import cache, partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdb import OUT, ROOT, machine_line, setup_django  # noqa: E402

os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1")
setup_django()

from campaign import judgement, truth_of  # noqa: E402
from corpus import corpus_file  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.cache import caches  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402
from http_server import CLK_TCK  # noqa: E402

SMALL = 1000
EXPERTS = 5  # four grade before the measurement, the fifth is the newcomer
JUDGED = 0.2  # judgements made before the measurement, a share of the judgements items need
GROWS = 1.5  # a statement whose buffers or rows grow past this ratio is reported


def backend_cpu() -> float:
    """CPU seconds of this connection's PostgreSQL backend so far."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def build(items: int) -> dict:
    """The two campaigns (built once), their experts' tokens and session cookies."""
    from campaign import campaign_build

    from annotation.models import Campaign

    made = {}
    for slug, size in (("scale-small", SMALL), ("scale-big", items)):
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None or campaign.items.count() != size:
            started = time.perf_counter()
            built = campaign_build(
                slug=slug, corpus=corpus_file(items, folder=OUT), items=size, experts=EXPERTS
            )
            grade_some(slug, built.experts[:-1], round(JUDGED * (size + built.double_scored)))
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
            print(f"{slug}: {size:,} items built in {time.perf_counter() - started:.0f} s")
        made[slug] = Campaign.objects.get(slug=slug)
    return made


def grade_some(slug: str, experts: list, judgements: int) -> None:
    from annotation.models import Campaign
    from annotation.services import GradeInput, assignment_next, grade_submit

    campaign = Campaign.objects.get(slug=slug)
    rng = random.Random(7)
    for turn in range(judgements):
        expert = experts[turn % len(experts)]
        assignment = assignment_next(campaign=campaign, expert=expert)
        grade_submit(
            item=assignment.item,
            expert=expert,
            data=GradeInput(score=Decimal(judgement(rng, truth_of(rng))), seconds_spent=240),
        )


def credentials(username: str) -> tuple[str, str]:
    from campaign import _session_cookie
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    user = User.objects.get(username=username)
    return Token.objects.get(user=user).key, _session_cookie(user)


def request(client: Client, api: Client, kind: str, item_id: int, rng: random.Random):
    """The grading page of the item, or its submission with `?next=1`."""
    if kind == "page":
        return client.get(reverse("annotation:item", args=[item_id]))
    return api.post(
        f"/api/v1/items/{item_id}/submit/?next=1",
        json.dumps({"score": rng.randint(0, 7)}),
        content_type="application/json",
    )


@cache
def clients(username: str) -> tuple[Client, Client]:
    """The expert's browser (their session cookie) and script (their token), each kept for the
    run as a web process keeps its loaded middleware."""
    token, cookie = credentials(username)
    browser = Client(HTTP_HOST="127.0.0.1")
    browser.cookies.load(cookie)  # the session and CSRF cookies
    return browser, Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Token {token}")


def walk(campaign, username: str, loads: int, *, captured: bool = False, profile=None):
    """`loads` page loads and submissions of the expert, in a transaction rolled back: the CPU
    (web, database) of the pages and of the submissions, or their captured statements."""
    from django.contrib.auth.models import User

    from annotation.models import Item
    from annotation.services import assignment_next
    from problems.services import texts_prerender

    client, api = clients(username)
    rng = random.Random(11)
    cpu = {"page": [0.0, 0.0], "submit": [0.0, 0.0]}
    statements = {"page": [], "submit": []}
    with transaction.atomic():
        expert = User.objects.get(username=username)
        item_id = assignment_next(campaign=campaign, expert=expert).item_id
        for _ in range(loads):
            proof_id = Item.objects.filter(pk=item_id).values_list("proof_id", flat=True)[0]
            texts_prerender(proof_ids=[proof_id])
            if "rendered" in settings.CACHES:  # rendered by the worker: not in this process
                caches["rendered"].clear()
            for kind in ("page", "submit"):
                send = partial(request, client, api, kind, item_id, rng)
                if profile is not None:
                    if kind == "page":
                        profile.enable()
                    response = send()
                    profile.disable()
                elif captured:
                    with CaptureQueriesContext(connection) as taken:
                        response = send()
                    statements[kind].append(explained(taken.captured_queries))
                else:
                    web, database = time.process_time(), backend_cpu()
                    response = send()
                    cpu[kind][1] += backend_cpu() - database
                    cpu[kind][0] += time.process_time() - web
                assert response.status_code == 200, (kind, response.status_code, response.content)
            following = response.json()["next"]
            if not following:
                break
            item_id = following["item"]["id"]
        transaction.set_rollback(True)
    return statements if captured else cpu


def by_package(profile, loads: int) -> list[tuple[str, float]]:
    """Python calls a page load, by package (the project's apps and the libraries'): a call of a
    built-in or of the standard library counts for the package of its caller."""
    import pstats

    stats = pstats.Stats(profile).stats

    def package(path: str) -> str:
        if "site-packages/" in path:
            folders = path.split("site-packages/", 1)[1].split("/")[:-1] or [path]
            return "/".join(folders[: 3 if folders[:2] == ["django", "contrib"] else 2])
        if path.startswith(str(ROOT)):
            return "proofmark " + Path(path).relative_to(ROOT).parts[0]
        return ""

    owners: dict = {}

    def owner(func, seen=()) -> str:
        """The package of the function, or of its most frequent caller's owner."""
        if func not in owners:
            found = package(func[0])
            callers = stats[func][4] if func in stats else {}
            if not found and callers and func not in seen:
                top = max(callers, key=lambda c: callers[c][1])
                found = owner(top, (*seen, func))
            owners[func] = found or "python"
        return owners[func]

    calls = defaultdict(int)
    for func, (_, total, *_) in stats.items():
        calls[owner(func)] += total
    return sorted(((p, n / loads) for p, n in calls.items()), key=lambda x: -x[1])


SHAPE = re.compile(r"'(?:[^']|'')*'|\b\d+(?:\.\d+)?\b")
BIG = ("annotation_item", "annotation_assignment", "annotation_grade", "adjudication_")


def explained(queries: list[dict]) -> list[dict]:
    """Each statement again under EXPLAIN (ANALYZE, BUFFERS), in a savepoint rolled back."""
    found = []
    for query in queries:
        sql = query["sql"]
        if not sql.lstrip("( \n\t").upper().startswith(("SELECT", "WITH", "UPDATE", "INSERT")):
            continue
        savepoint = transaction.savepoint()
        try:
            with connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql)
                plan = cursor.fetchone()[0]
        except Exception:  # a write run twice (a unique row): its plan is not needed here
            transaction.savepoint_rollback(savepoint)
            continue
        transaction.savepoint_rollback(savepoint)
        plan = json.loads(plan) if isinstance(plan, str) else plan
        top = plan[0]["Plan"]
        rows, seq, nodes = 0, [], [top]
        while nodes:
            node = nodes.pop()
            nodes.extend(node.get("Plans", []))
            relation = node.get("Relation Name", "")
            if relation.startswith(BIG):
                loops = node.get("Actual Loops", 1)
                rows += (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * loops
                if node["Node Type"] == "Seq Scan":
                    seq.append(relation)
        found.append(
            {
                "shape": SHAPE.sub("?", " ".join(sql.split()))[:160],
                "ms": plan[0]["Execution Time"],
                "buffers": top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0),
                "rows": rows,
                "seq": seq,
            }
        )
    return found


def per_shape(loads: list[list[dict]]) -> dict[str, dict]:
    """Per statement shape: runs a load, mean ms, buffers and rows a run."""
    total = defaultdict(lambda: {"runs": 0, "ms": 0.0, "buffers": 0, "rows": 0, "seq": set()})
    for load in loads:
        for s in load:
            t = total[s["shape"]]
            t["runs"] += 1
            t["ms"] += s["ms"]
            t["buffers"] += s["buffers"]
            t["rows"] += s["rows"]
            t["seq"].update(s["seq"])
    return {
        shape: {
            "per_load": t["runs"] / len(loads),
            "ms": t["ms"] / t["runs"],
            "buffers": t["buffers"] / t["runs"],
            "rows": t["rows"] / t["runs"],
            "seq": sorted(t["seq"]),
        }
        for shape, t in total.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 items, 10 loads")
    parser.add_argument("--items", type=int, help="items of the big campaign (default 100,000)")
    parser.add_argument("--loads", type=int, help="page loads an expert (default 30)")
    parser.add_argument("--json", type=Path, help="also write the figures there (JSON)")
    parser.add_argument(
        "--profile", action="store_true",
        help="only the small campaign's page: its Python calls by package (cProfile), its CPU",
    )  # fmt: skip
    args = parser.parse_args()
    items = args.items or (10_000 if args.quick else 100_000)
    loads = args.loads or (10 if args.quick else 30)
    original = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = (
        f"bench_scale_{original}_{items}_{JUDGED * 100:.0f}"
    )
    connection.creation.create_test_db(verbosity=0, keepdb=True)
    campaigns = build(items)
    print(machine_line())
    if args.profile:
        import cProfile

        walk(campaigns["scale-small"], "bench-expert-0", 3)  # warm
        profile = cProfile.Profile()
        walk(campaigns["scale-small"], "bench-expert-0", loads, profile=profile)
        found = by_package(profile, loads)
        cpu = walk(campaigns["scale-small"], "bench-expert-0", loads)
        print(
            f"a grading page load: {cpu['page'][0] / loads * 1000:.2f} ms of web CPU, "
            f"{cpu['page'][1] / loads * 1000:.1f} ms of database CPU; a submission "
            f"{cpu['submit'][0] / loads * 1000:.2f} ms of web CPU"
        )
        print(f"Python calls a grading page load: {sum(n for _, n in found):,.0f}")
        for package, calls in found:
            print(f"  {calls:8,.0f}  {package}")
        return
    figures = {}
    for who in ("bench-expert-0", "bench-expert-4"):
        for slug, campaign in campaigns.items():
            walk(campaign, who, 3, captured=False)  # warm: imports, caches, plans
            cpu = walk(campaign, who, loads, captured=False)
            shapes = {
                kind: per_shape(found)
                for kind, found in walk(campaign, who, loads, captured=True).items()
            }
            figures[(who, slug)] = {"cpu": cpu, "statements": shapes}
    report(figures, loads)
    if args.json:
        args.json.write_text(
            json.dumps({f"{w} {s}": f for (w, s), f in figures.items()}, indent=1, default=list)
        )


def report(figures: dict, loads: int) -> None:
    for who in ("bench-expert-0", "bench-expert-4"):
        small, big = figures[(who, "scale-small")], figures[(who, "scale-big")]
        print(f"\n{who} ({'veteran' if who.endswith('0') else 'newcomer'}), {loads} loads")
        for kind in ("page", "submit"):
            s, b = (f["cpu"][kind] for f in (small, big))
            sq, bq = (f["statements"][kind] for f in (small, big))
            print(
                f"  {kind:6}  web CPU {s[0] / loads * 1000:5.1f} -> {b[0] / loads * 1000:5.1f} ms"
                f"  database CPU {s[1] / loads * 1000:5.1f} -> {b[1] / loads * 1000:5.1f} ms"
                f"  statements {sum(x['per_load'] for x in sq.values()):.1f} -> "
                f"{sum(x['per_load'] for x in bq.values()):.1f}"
                f"  EXPLAIN ms {sum(x['ms'] * x['per_load'] for x in sq.values()):.2f} -> "
                f"{sum(x['ms'] * x['per_load'] for x in bq.values()):.2f}"
            )
            for shape in sorted(set(sq) | set(bq)):
                one, two = sq.get(shape), bq.get(shape)
                if one is None or two is None:
                    print(f"    only on {'big' if one is None else 'small'}: {shape}")
                    continue
                grows = (
                    any(two[k] > GROWS * one[k] + 8 for k in ("buffers", "rows"))
                    or two["ms"] > GROWS * one["ms"] + 0.05
                )
                if grows or two["seq"]:
                    print(
                        f"    {one['ms']:.3f} -> {two['ms']:.3f} ms, buffers "
                        f"{one['buffers']:.0f} -> {two['buffers']:.0f}, rows {one['rows']:.0f} "
                        f"-> {two['rows']:.0f}{' SEQ ' + ','.join(two['seq']) if two['seq'] else ''}"
                        f"\n      {shape}"
                    )


if __name__ == "__main__":
    main()
