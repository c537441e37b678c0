"""`make run` as a newcomer types it: every stage runs and says when it was done (packages,
migration, demo, the first page, then the worker and beat), everything written lands in
PROOFMARK_RUN_DIR, and Ctrl-C stops every process it started. Times are printed, not checked."""

import os
import re
import signal
import socket
import subprocess
import time

from tests.conftest import ROOT

STAGES = [
    r"Packages in place after \d+\.\d s",
    r"Database migrated after \d+\.\d s",
    r"Demo loaded after \d+\.\d s",
    r"First page answered after \d+\.\d s \(GET / from the start\)",
    r"Background worker started \(pid \d+",
    r"Beat started \(pid \d+",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_make_run_prints_each_stage_and_ctrl_c_stops_everything(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["PROOFMARK_RUN_DIR"] = str(tmp_path / "run")
    run = subprocess.Popen(
        ["make", "--no-print-directory", "run", f"PORT={_free_port()}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal gives it
        # Ctrl-C's default action, which a pytest-xdist worker (ignoring SIGINT) would pass on
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 240
        while not any(line.startswith("Beat started") for line in lines):
            assert time.monotonic() < deadline, "".join(lines)
            line = run.stdout.readline()
            assert line, "make run stopped:\n" + "".join(lines)
            lines.append(line)
        output = "".join(lines)
        positions = [re.search(stage, output) for stage in STAGES]
        assert all(positions), output
        assert [p.start() for p in positions] == sorted(p.start() for p in positions), output
        assert "Demo log-ins" in output.split("Demo loaded after")[0]
        wanted = {"proofmark.sqlite3", "broker", "media", "worker.log", "beat.log"}
        while not wanted <= {p.name for p in (tmp_path / "run").iterdir()}:
            assert time.monotonic() < deadline, sorted((tmp_path / "run").iterdir())
            time.sleep(0.1)  # the logs open as the processes start
    finally:
        os.killpg(run.pid, signal.SIGINT)  # Ctrl-C reaches the terminal's process group
        run.communicate(timeout=30)
    deadline = time.monotonic() + 15
    while _group_alive(run.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = _group_alive(run.pid)
    if alive:
        os.killpg(run.pid, signal.SIGKILL)
    assert not alive, "a process of make run outlived Ctrl-C"
