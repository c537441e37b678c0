"""The project's one helper for background threads, in the three shapes its callers need: work
read ahead of the caller (`read_ahead`: the export's batches, the import's records), work done
behind it (`Behind`: the export's file writes and hashes), and a beat every few seconds until
stopped (`every`: a job's heartbeat, a worker's sign of life). Each thread is a daemon, and its
failure reaches the caller."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, connections

T = TypeVar("T")


def read_ahead(steps: Iterator[T], *, depth: int = 1, alias: str = DEFAULT_DB_ALIAS) -> Iterator[T]:
    """`steps` (an iterator whose each step reads the database, or files) run `depth` steps ahead
    in a thread of its own, on the caller's connection: while the caller encodes one batch, the
    next one is read (the dataset export's batches; the import's records,
    `problems.services.corpus.records_ahead`). The database's work and the driver's wait
    release the interpreter lock, so on a second core the two overlap (an export spent about 40% of its time waiting on its reads). The same
    connection, not a second one: the steps see the caller's transaction, and the query log and
    query counts see the steps' statements (psycopg serialises the connection's use).

    Exactly `depth` steps ahead, whatever the timing: step k + depth is read once the caller has
    taken step k, so a caller that stops after taking k steps has had k + depth read (at most
    `depth` steps wait in memory). A failure in a step is raised in the caller."""
    wrapper = connections[alias]
    wrapper.inc_thread_sharing()
    handoff: queue.SimpleQueue = queue.SimpleQueue()  # holds at most `depth` steps
    state = threading.Condition()
    wanted = [depth, False]  # steps asked for, the caller stopped
    end = object()

    def run() -> None:
        connections[alias] = wrapper  # this thread's name for the caller's connection
        read = 0
        try:
            while True:
                with state:
                    state.wait_for(lambda read=read: wanted[0] > read or wanted[1])
                    if wanted[0] <= read:
                        return  # stopped, nothing more asked for
                step = next(steps, end)
                read += 1
                handoff.put((step, None))
                if step is end:
                    return
        except BaseException as exc:  # handed to the caller
            handoff.put((end, exc))

    thread = threading.Thread(target=run, name="read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            step, failure = handoff.get()
            if step is end:
                if failure is not None:
                    raise failure
                return
            with state:
                wanted[0] += 1
                state.notify()
            yield step
    finally:
        with state:
            wanted[1] = True
            state.notify()
        thread.join()
        wrapper.dec_thread_sharing()


class Behind:
    """Work done by a thread of its own, a bounded queue behind the caller: `put` hands it an
    item (raising the failure of an earlier one), `close` lets it finish, `check` raises its
    failure. Hashing, file writes and Arrow release the interpreter lock, so on a second core the
    work overlaps the caller's encoding; the queue's bound keeps memory flat. After a failure the
    rest is taken and dropped, so the caller never waits on a full queue."""

    def __init__(self, work: Callable[[object], object], *, bound: int, name: str):
        self.work = work
        self.items: queue.Queue = queue.Queue(maxsize=bound)
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._drain, name=name, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while (item := self.items.get()) is not None:
            if self.failure is None:
                try:
                    self.work(item)
                except BaseException as exc:  # handed to the caller by put() or check()
                    self.failure = exc

    def check(self) -> None:
        if self.failure is not None:
            raise self.failure

    def put(self, item: object) -> None:
        self.check()
        self.items.put(item)

    def close(self) -> None:
        if self.thread.is_alive():
            self.items.put(None)
            self.thread.join()


def every(
    seconds: float,
    beat: Callable[[], object],
    *,
    name: str,
    last: Callable[[], object] | None = None,
) -> Callable[[], None]:
    """Calls `beat` every `seconds` in a thread of its own, then `last` (in that thread) once
    stopped; returns the stop, which waits for the thread (a beat under way finishes first)."""
    stopped = threading.Event()

    def run() -> None:
        try:
            while not stopped.wait(seconds):
                beat()
        finally:
            if last is not None:
                last()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()

    def stop() -> None:
        stopped.set()
        thread.join()

    return stop
