"""Label Studio on this machine and corpus, as production serves it: one round of the
side-by-side benchmark (benchmarks/bench_versus_label_studio.py puts its figures beside
Proofmark's, `make bench COMPARE=label-studio`).

    DATABASE_URL=postgres://.../proofmark_bench python benchmarks/label_studio_round.py \
        [--quick | --items 20000] [--json out.json]

Label Studio (`LABEL_STUDIO_VERSION`, 1.23.2) is installed from the package index into a venv of
its own, `.run/label-studio/venv` (Python 3.12: `LABEL_STUDIO_PYTHON`, else `python3.12` on the
PATH or pyenv's), once; nothing of it is vendored. It is served as its Docker image's
production set-up does, on PostgreSQL (a database `<DATABASE_URL's name>_ls`, made afresh each
run) behind gunicorn with 2 sync workers, like Proofmark's Procfile `web`, DEBUG off, its
version check off (no network).

The rows, on the rows of benchmarks/corpus.py's corpus (the proofs Proofmark imports):
- import: every proof as a task (problem, proof, generator) through `POST /api/projects/ID/import`,
  timed until the project holds them all;
- judgements: an annotation (a 0-7 choice) per task through `POST /api/tasks/ID/annotations/`, by
  1, 4 and 16 experts at once, each with its own token and its own tasks: rate, p95 and the web
  workers' CPU per annotation (from /proc);
- the page an expert loads per item: `GET /api/tasks/ID/` (the task with its annotations, what
  the labelling page fetches) and `GET /api/projects/ID/next/` (the label stream's next task),
  4 experts at once: p50 and p95 and web CPU per load;
- export: a snapshot of every labelled task (`POST /api/projects/ID/exports/`, then its
  download as JSON): rows/s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdb import HERE, OUT, ROOT, machine_line  # noqa: E402
from corpus import corpus_file  # noqa: E402
from http_server import children_of, request, tree_cpu  # noqa: E402

LABEL_STUDIO_VERSION = "1.23.2"
HOME = ROOT / ".run" / "label-studio"
VENV = HOME / "venv"
PORT = int(os.environ.get("LABEL_STUDIO_PORT", "8795"))
EXPERTS = 16
CONFIG = """<View>
  <Text name="problem" value="$problem"/>
  <Text name="proof" value="$proof"/>
  <Choices name="score" toName="proof" choice="single" showInline="true">
    <Choice value="0"/><Choice value="1"/><Choice value="2"/><Choice value="3"/>
    <Choice value="4"/><Choice value="5"/><Choice value="6"/><Choice value="7"/>
  </Choices>
</View>"""


# --- Installing and serving Label Studio -------------------------------------------------------


def python312() -> str:
    """An interpreter of Python 3.12 that runs: LABEL_STUDIO_PYTHON, `python3.12` on the PATH or
    pyenv's (a pyenv shim on the PATH without that version selected exits 127: each is tried)."""
    candidates = [os.environ.get("LABEL_STUDIO_PYTHON"), shutil.which("python3.12")]
    candidates += [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.12*/bin/python3.12"))]
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import venv"], capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate
    sys.exit("Label Studio needs Python 3.12: set LABEL_STUDIO_PYTHON to one")


def install() -> Path:
    """The venv with Label Studio and gunicorn (installed from the index the first time);
    returns Label Studio's package folder."""
    stamp = VENV / f".label-studio-{LABEL_STUDIO_VERSION}"
    if not stamp.exists():
        HOME.mkdir(parents=True, exist_ok=True)
        subprocess.run([python312(), "-m", "venv", str(VENV)], check=True)
        pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, f"label-studio=={LABEL_STUDIO_VERSION}", "gunicorn"], check=True)
        stamp.touch()
    found = list(VENV.glob("lib/python3.*/site-packages/label_studio"))
    return found[0]


def ls_env(database: str) -> dict:
    import dj_database_url

    config = dj_database_url.parse(os.environ["DATABASE_URL"])
    env = dict(os.environ)
    env.update(
        DJANGO_DB="default",
        DJANGO_SETTINGS_MODULE="core.settings.label_studio",
        POSTGRE_NAME=database,
        POSTGRE_USER=config["USER"] or "postgres",
        POSTGRE_PASSWORD=config["PASSWORD"] or "",
        POSTGRE_HOST=config["HOST"] or "127.0.0.1",
        POSTGRE_PORT=str(config["PORT"] or 5432),
        LABEL_STUDIO_BASE_DATA_DIR=str(HOME / "data"),
        LATEST_VERSION_CHECK="false",
        DEBUG="false",
        LOG_LEVEL="WARNING",
        SECRET_KEY="benchmark-only",
    )
    env.pop("DATABASE_URL", None)
    return env


def fresh_database(name: str) -> None:
    import dj_database_url
    import psycopg

    config = dj_database_url.parse(os.environ["DATABASE_URL"])
    with psycopg.connect(
        host=config["HOST"] or "127.0.0.1", port=config["PORT"] or 5432,
        user=config["USER"], dbname="postgres", autocommit=True,
    ) as admin:  # fmt: skip
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')


class LabelStudio:
    """gunicorn serving Label Studio's WSGI application, 2 sync workers."""

    def __init__(self, package: Path, env: dict, workers: int = 2):
        self.log = (HOME / "gunicorn.log").open("w")
        self.proc = subprocess.Popen(
            [str(VENV / "bin" / "gunicorn"), "--chdir", str(package), "--workers", str(workers),
             "--bind", f"127.0.0.1:{PORT}", "--timeout", "300", "core.wsgi:application"],
            env=env, stdout=self.log, stderr=self.log,
        )  # fmt: skip
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if request(PORT, "GET", "/health")[0] == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                sys.exit(f"Label Studio's gunicorn exited: see {HOME / 'gunicorn.log'}")
            time.sleep(0.5)
        self.stop()
        sys.exit("Label Studio did not answer within 180 s")

    def cpu(self) -> float:
        return tree_cpu(self.proc.pid, children_of(self.proc.pid))

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def call(token: str, method: str, path: str, payload=None) -> tuple[int, object]:
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    body = json.dumps(payload) if payload is not None else None
    status, raw = request(PORT, method, path, headers=headers, body=body)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw[:300]


# --- The rows ------------------------------------------------------------------------------------


def tasks_of(corpus: Path) -> list[dict]:
    tasks = []
    with corpus.open() as handle:
        for line in handle:
            row = json.loads(line)
            tasks.append(
                {"data": {"problem": row["problem"], "proof": row["model_solution"],
                          "generator": row["generator"], "problem_id": row["problem_id"]}}
            )  # fmt: skip
    return tasks


def timed_clients(clients: int, work: list, act) -> dict:
    """`work` shared out among `clients` threads, each calling act(client, item); rate, p50, p95."""
    times: list[float] = []
    lock = threading.Lock()
    shares = [work[n::clients] for n in range(clients)]

    def run(n: int) -> None:
        for item in shares[n]:
            t0 = time.perf_counter()
            act(n, item)
            with lock:
                times.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    times.sort()
    return {
        "n": len(times),
        "rate": len(times) / wall,
        "p50_ms": statistics.median(times) * 1000,
        "p95_ms": times[int(0.95 * (len(times) - 1))] * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--quick", action="store_true", help="2,000 tasks, 150 judgements, 100 pages"
    )
    parser.add_argument("--items", type=int, help="tasks (default 20,000)")
    parser.add_argument("--judgements", type=int, help="per client count (default 600)")
    parser.add_argument("--pages", type=int, help="page loads of each kind (default 400)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.items = args.items or (2_000 if args.quick else 20_000)
    args.judgements = args.judgements or (150 if args.quick else 600)
    args.pages = args.pages or (100 if args.quick else 400)
    package = install()
    database = os.environ["DATABASE_URL"].rsplit("/", 1)[1] + "_ls"
    fresh_database(database)
    env = ls_env(database)
    python = str(VENV / "bin" / "python")
    subprocess.run([python, "manage.py", "migrate", "-v0"], cwd=package, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    init = subprocess.run(
        [python, str(HERE / "label_studio_init.py"), str(EXPERTS)],
        cwd=package, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    tokens = json.loads(init.stdout.strip().splitlines()[-1])["tokens"]
    owner, experts = tokens[0], tokens[1:]
    corpus = corpus_file(args.items, folder=OUT)
    tasks = tasks_of(corpus)
    server = LabelStudio(package, env)
    figures: dict[str, dict] = {}
    try:
        status, project = call(owner, "POST", "/api/projects/",
                               {"title": "Bench", "label_config": CONFIG})  # fmt: skip
        assert status == 201, project
        pid = project["id"]
        started, cpu0 = time.perf_counter(), server.cpu()
        status, answer = call(owner, "POST", f"/api/projects/{pid}/import", tasks)
        assert status == 201, answer
        while call(owner, "GET", f"/api/projects/{pid}/")[1]["task_number"] < len(tasks):
            time.sleep(0.2)
        seconds = time.perf_counter() - started
        figures["import"] = {"proofs": len(tasks), "seconds": seconds,
                             "proofs_per_s": len(tasks) / seconds,
                             "web_cpu_s": server.cpu() - cpu0}  # fmt: skip
        print(f"import: {len(tasks):,} tasks in {seconds:.1f} s ({len(tasks) / seconds:,.0f}/s)")
        ids = []
        page = 1
        while True:
            status, body = call(
                owner,
                "GET",
                f"/api/tasks/?project={pid}&page={page}&page_size=1000&fields=task_only",
            )
            if status != 200 or not body.get("tasks"):
                break
            ids += [task["id"] for task in body["tasks"]]
            page += 1
        todo = iter(ids)
        for clients in (1, 4, 16):
            work = [next(todo) for _ in range(min(args.judgements, len(ids)) // clients * clients)]

            def annotate(n: int, task_id: int) -> None:
                score = str(task_id % 8)
                result = [{"from_name": "score", "to_name": "proof", "type": "choices",
                           "value": {"choices": [score]}}]  # fmt: skip
                status, body = call(experts[n], "POST", f"/api/tasks/{task_id}/annotations/",
                                    {"result": result, "lead_time": 240})  # fmt: skip
                assert status == 201, body

            cpu0 = server.cpu()
            row = timed_clients(clients, work, annotate)
            row["web_cpu_ms"] = (server.cpu() - cpu0) / row["n"] * 1000
            figures[f"judgements {clients}"] = row
            print(f"judgements, {clients:>2} experts: {row['rate']:.1f}/s, p95 {row['p95_ms']:.0f} ms, "
                  f"web CPU {row['web_cpu_ms']:.1f} ms each")  # fmt: skip
        for name, path in (("task page", "/api/tasks/{id}/"),
                           ("next task", f"/api/projects/{pid}/next/")):  # fmt: skip
            pages = ids[: args.pages]

            def load(n: int, task_id: int, path=path) -> None:
                status, body = call(experts[n], "GET", path.format(id=task_id))
                assert status == 200, body

            cpu0 = server.cpu()
            row = timed_clients(4, pages, load)
            row["web_cpu_ms"] = (server.cpu() - cpu0) / row["n"] * 1000
            figures[name] = row
            print(f"{name}, 4 experts: p50 {row['p50_ms']:.0f} ms, p95 {row['p95_ms']:.0f} ms, "
                  f"web CPU {row['web_cpu_ms']:.1f} ms each")  # fmt: skip
        labelled = sum(figures[f"judgements {c}"]["n"] for c in (1, 4, 16))
        started = time.perf_counter()
        status, snapshot = call(owner, "POST", f"/api/projects/{pid}/exports/",
                                {"title": "bench", "task_filter_options": {"annotated": "only"}})  # fmt: skip
        assert status == 201, snapshot
        while (
            call(owner, "GET", f"/api/projects/{pid}/exports/{snapshot['id']}")[1].get("status")
            != "completed"
        ):
            time.sleep(0.1)
        status, raw = request(PORT, "GET", f"/api/projects/{pid}/exports/{snapshot['id']}/download?exportType=JSON",
                              headers={"Authorization": f"Token {owner}"})  # fmt: skip
        seconds = time.perf_counter() - started
        rows = len(json.loads(raw))
        figures["export"] = {"rows": rows, "seconds": seconds, "rows_per_s": rows / seconds}
        print(
            f"export: {rows:,} labelled tasks in {seconds:.2f} s ({rows / seconds:,.0f} rows/s; {labelled} annotated)"
        )
    finally:
        server.stop()
    machine = machine_line()
    print(machine)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"machine": machine, "items": args.items,
                                         "version": LABEL_STUDIO_VERSION, "results": figures}))  # fmt: skip


if __name__ == "__main__":
    main()
