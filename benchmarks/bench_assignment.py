"""Benchmark: assignment and submission throughput, and grading-page server time.

Standalone: `DATABASE_URL=postgres://... python benchmarks/bench_assignment.py`. Like Django's
test runner it creates a fresh database named bench_<name> next to the one in DATABASE_URL,
migrates it, and drops it at the end; real data is never touched.

1. Assignments per second: 32 threads, each on its own connection and as its own expert, call
   `assignment_next` until the pool is empty; after each lease the thread marks it done and the
   item complete (two UPDATEs by primary key in one transaction that, like the lease itself,
   does not wait for the WAL flush; counted in the wall time).
2. Submitted grades per second: the leases are made beforehand; 32 threads call `grade_submit`
   (item row lock, validation, score function, spans) for their own items. Every item needs one
   judgement, so every submission also derives the item's label (`item_judged` ->
   `adjudication.services.item_evaluate`) in the same transaction, as in production. Measured
   twice: straight submissions (as API clients make them), and over the draft that the grading
   page's autosave leaves (saved beforehand, not timed), whose row and spans are replaced.
3. Grading-page server time: Django's test Client GETs the page of a 30 KB proof with 50 error
   spans and a 7-checkpoint scheme; median of 60 requests after a warm-up.
In-process figures (the services called in this process, no HTTP, no web process): the
services' own cost, never a headline figure of what users get (bench_http.py measures that).
`--quick`: 800 leases, 15 grades a thread, 20 page requests. Prints the machine, date and load
average with the figures; `--write` appends them to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", "benchmark-only")

import django  # noqa: E402

django.setup()

from benchdb import machine_line  # noqa: E402
from django.db import connection, connections, transaction  # noqa: E402

THREADS = int(os.environ.get("BENCH_THREADS", "32"))
ITEMS = int(os.environ.get("BENCH_ITEMS", "3200"))
GRADES_PER_THREAD = int(os.environ.get("BENCH_GRADES_PER_THREAD", "60"))
PAGE_RUNS = 60


def analyze() -> None:
    """Fresh planner statistics after the bulk set-up, as autovacuum keeps them in production."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def run_threads(target) -> float:
    errors: list[BaseException] = []
    barrier = threading.Barrier(THREADS + 1)

    def wrapped(index: int) -> None:
        try:
            connection.ensure_connection()
            barrier.wait()
            target(index)
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise errors[0]
    return elapsed


def make_corpus(n_proofs: int, text: str = "Short proof.") -> list:
    from problems.models import Problem, Proof

    problem = Problem.objects.create(external_id=f"BENCH-{time.time_ns()}", statement="Prove it.")
    return Proof.objects.bulk_create(
        Proof(
            problem=problem, generator=f"gen-{i % 4}", sample_key=str(i), text=text, text_hash="x"
        )
        for i in range(n_proofs)
    )


def experts(prefix: str, campaign):
    from django.contrib.auth.models import User

    from annotation.models import CampaignMember

    users = User.objects.bulk_create(User(username=f"{prefix}-{i}") for i in range(THREADS))
    CampaignMember.objects.bulk_create(
        CampaignMember(campaign=campaign, user=u, role="expert") for u in users
    )
    return users


def bench_assignments() -> tuple[int, float]:
    from annotation.models import Assignment, AssignmentStatus, Campaign, Item

    campaign = Campaign.objects.create(slug="bench-assign", name="bench assign")
    Item.objects.bulk_create(Item(campaign=campaign, proof=p) for p in make_corpus(ITEMS))
    users = experts("assign", campaign)
    analyze()
    counts = [0] * THREADS

    def work(index: int) -> None:
        from annotation.services import assignment_next

        expert = users[index]
        while True:
            assignment = assignment_next(campaign=campaign, expert=expert)
            if assignment is None:
                return
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
                Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.DONE)
                Item.objects.filter(pk=assignment.item_id).update(
                    submitted_count=1, needs_work=False
                )
            counts[index] += 1

    elapsed = run_threads(work)
    total = sum(counts)
    assert total == ITEMS, (total, ITEMS)
    return total, elapsed


def bench_grades(*, drafts: bool = False) -> tuple[int, float]:
    from django.utils import timezone

    from annotation.models import Assignment, Campaign, Item
    from annotation.services import GradeInput, grade_save_draft, grade_submit

    slug = "bench-grade-drafts" if drafts else "bench-grade"
    campaign = Campaign.objects.create(slug=slug, name=slug)
    proofs = make_corpus(THREADS * GRADES_PER_THREAD, text="We have x > 1. Hence the claim.")
    items = Item.objects.bulk_create(Item(campaign=campaign, proof=p) for p in proofs)
    users = experts(slug, campaign)
    until = timezone.now() + timedelta(hours=2)
    Assignment.objects.bulk_create(
        Assignment(item=item, expert=users[n % THREADS], leased_until=until)
        for n, item in enumerate(items)
    )
    mine = [[item for n, item in enumerate(items) if n % THREADS == i] for i in range(THREADS)]
    analyze()
    data = {
        "score": "3",
        "comment": "Partial progress.",
        "spans": [{"start": 15, "end": 20, "quote": "Hence", "category": "skipped_steps"}],
    }
    if drafts:  # what the grading page's autosave leaves before the expert submits (not timed)
        draft = {**data, "score": "2", "seconds_spent": 60}
        for n, item in enumerate(items):
            grade_save_draft(item=item, expert=users[n % THREADS], data=GradeInput.from_data(draft))

    def work(index: int) -> None:
        for item in mine[index]:
            grade_submit(item=item, expert=users[index], data=GradeInput.from_data(data))

    elapsed = run_threads(work)
    return len(items), elapsed


def bench_page() -> tuple[float, int]:
    from django.contrib.auth.models import Group, User
    from django.test import Client
    from django.utils import timezone

    from annotation.models import Assignment, Campaign, CampaignMember, Item
    from annotation.services import GradeInput, grade_save_draft
    from rubrics.models import MarkingScheme, SchemeStatus
    from rubrics.structure import parse_scheme

    paragraph = (
        "Let $a_n$ be the sequence with $a_{n+1} = a_n^2 - 2$ and note that "
        "$$\\sum_{k=1}^{n} \\frac{1}{a_k} \\le \\frac{3}{2}.$$ Hence the claim follows by induction "
        "on $n$, since every step preserves the bound.\n\n"
    )
    text = (paragraph * (30_000 // len(paragraph) + 1))[:30_000]
    proof = make_corpus(1, text=text)[0]
    lines = ["## Checkpoints (7 pts total)", ""]
    lines += [f"{i}. **Step {i}** (1 pts): step {i}. [additive]" for i in range(1, 8)]
    lines += ["", "## Deductions", "- Slip: -1", "- Circular: cap at 3/7"]
    scheme_text = "\n".join(lines)
    scheme, _ = parse_scheme(scheme_text, "proofbench_markdown")
    row = MarkingScheme.objects.create(
        problem=proof.problem, version=1, method="manual", status=SchemeStatus.APPROVED,
        text=scheme_text, structure=scheme.to_dict(), is_valid=True,
    )  # fmt: skip
    campaign = Campaign.objects.create(slug="bench-page", name="bench page")
    item = Item.objects.create(campaign=campaign, proof=proof, scheme=row)
    user = User.objects.create_user("page-expert", password="x")
    user.groups.add(Group.objects.get_or_create(name="expert")[0])
    CampaignMember.objects.create(campaign=campaign, user=user, role="expert")
    Assignment.objects.create(
        item=item, expert=user, leased_until=timezone.now() + timedelta(hours=2)
    )
    word = "Hence"
    starts, pos = [], 0
    while len(starts) < 50:
        pos = text.index(word, pos)
        starts.append(pos)
        pos += 1
    spans = [{"start": s, "end": s + 5, "quote": word, "category": "other"} for s in starts]
    grade_save_draft(item=item, expert=user, data=GradeInput.from_data({"spans": spans}))
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    url = f"/annotation/items/{item.pk}/"
    for _ in range(5):
        assert client.get(url).status_code == 200
    times = []
    for _ in range(PAGE_RUNS):
        start = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - start)
        assert response.status_code == 200
    return statistics.median(times) * 1000, len(text)


def main() -> None:
    global ITEMS, GRADES_PER_THREAD, PAGE_RUNS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="800 leases, 15 grades a thread")
    parser.add_argument("--write", action="store_true", help="append to benchmarks/RESULTS.md")
    args = parser.parse_args()
    if args.quick:
        ITEMS, GRADES_PER_THREAD, PAGE_RUNS = 800, 15, 20
    original = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_{original}"
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        assignments, assign_s = bench_assignments()
        print(f"assignments: {assignments} in {assign_s:.2f} s", flush=True)
        grades, grade_s = bench_grades()
        print(f"grades: {grades} in {grade_s:.2f} s", flush=True)
        drafted, drafted_s = bench_grades(drafts=True)
        print(f"grades over drafts: {drafted} in {drafted_s:.2f} s", flush=True)
        page_ms, proof_chars = bench_page()
    finally:
        connections.close_all()
        connection.creation.destroy_test_db(original, verbosity=0)
    rate_a = assignments / assign_s
    rate_g = grades / grade_s
    rate_d = drafted / drafted_s
    lines = [
        "",
        f"## Annotation services, in-process (`bench_assignment.py`{' --quick' if args.quick else ''})",
        "",
        f"Machine: {machine_line()} (at the end; the {THREADS} threads count in it); PostgreSQL "
        f"(database {test_name}, dropped after). In-process: the services' own cost, not what "
        "users get over HTTP.",
        "",
        "| measure | result | target |",
        "|---|---|---|",
        f"| assignments/s (32 threads, own connections, {assignments} leases) | {rate_a:.0f} | >= 300 |",
        f"| submitted grades/s (32 threads, own connections, {grades} grades) | {rate_g:.0f} | >= 300 |",
        f"| the same over autosaved drafts (spans replaced) | {rate_d:.0f} | >= 300 |",
        f"| grading page, median server time ({proof_chars // 1000} KB proof, 50 spans, "
        f"{PAGE_RUNS} requests) | {page_ms:.1f} ms | < 50 ms |",
        "",
        "Reference: Label Studio 1.23 takes about 10.5 annotations/s through its API on this "
        "machine on PostgreSQL, one client.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        with (ROOT / "benchmarks" / "RESULTS.md").open("a") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
