"""`make run` as a newcomer types it: every stage runs and says when it was done (packages,
migration, demo, the first page, a demo expert's log-in, then the worker and beat), everything
written lands in PROOFMARK_RUN_DIR, and Ctrl-C stops every process it started; a second start
keeps the demo the first one loaded. Times are printed, not checked."""

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
    r"Demo ready after \d+\.\d s",
    r"First page answered after \d+\.\d s \(GET / from the start\)",
    r"Logging in works after \d+\.\d s \(expert1 reached /annotation/\)",
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


def _make_run(run_dir) -> tuple[str, bool]:
    """Starts `make run` on the embedded default, reads its log until beat has started, then
    presses Ctrl-C; returns the log and whether a process outlived Ctrl-C."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["PROOFMARK_RUN_DIR"] = str(run_dir)
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
        wanted = {"pg", "database-url", "broker", "media", "worker.log", "beat.log"}
        while not wanted <= {p.name for p in run_dir.iterdir()}:
            assert time.monotonic() < deadline, sorted(run_dir.iterdir())
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
    return "".join(lines), alive


def _stages_in_order(output: str) -> None:
    positions = [re.search(stage, output) for stage in STAGES]
    assert all(positions), output
    assert [p.start() for p in positions] == sorted(p.start() for p in positions), output


def test_make_run_prints_each_stage_and_ctrl_c_stops_everything_and_keeps_the_demo(tmp_path):
    first, alive = _make_run(tmp_path / "run")
    assert not alive, "a process of make run outlived Ctrl-C"
    _stages_in_order(first)
    assert "Demo log-ins" in first.split("Demo ready after")[0]
    assert "Demo kept" not in first
    second, alive = _make_run(tmp_path / "run")
    assert not alive, "a process of the second make run outlived Ctrl-C"
    _stages_in_order(second)
    assert "Demo kept as an earlier run left it" in second
    assert "Marking schemes:" not in second  # no loader ran again
