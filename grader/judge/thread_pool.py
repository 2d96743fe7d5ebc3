"""The one pool of threads the grader runs tasks on: ``grade_many`` (:mod:`grader.judge.session`)
its puzzles, ``classroom.grade_class`` its students, each student's puzzles in turn on a pool of
its own."""
from __future__ import annotations

import queue
import threading
from typing import Callable, Sequence, TypeVar

Task = TypeVar("Task")
Done = TypeVar("Done")


def run_pool(tasks: Sequence[Task], threads: int, work: Callable[[int, Task], Done],
             on_done: Callable[[Done], None] | None = None, stop: threading.Event | None = None) -> list[Done | None]:
    """``work(thread, task)`` for every task, on ``threads`` threads; the results keep the order
    of ``tasks``. ``thread`` (0 .. threads-1) says which thread runs the task, so that each can
    own a worker. ``on_done`` sees every result as it comes (a progress bar). An exception in
    ``work`` ends its thread (Python prints it) and leaves None in the task's place: a caller
    that must account for every task catches inside ``work``.

    With a ``stop`` event, Ctrl-C sets it instead of raising: the tasks under way finish, no
    other starts, and theirs stay None (the caller sees ``stop.is_set()``)."""
    results: list[Done | None] = [None] * len(tasks)
    todo: queue.Queue = queue.Queue()
    for item in enumerate(tasks):
        todo.put(item)

    def drive(thread: int) -> None:
        while stop is None or not stop.is_set():
            try:
                index, task = todo.get_nowait()
            except queue.Empty:
                return
            results[index] = work(thread, task)
            if on_done is not None:
                on_done(results[index])

    pool = [threading.Thread(target=drive, args=(n,), daemon=True) for n in range(max(1, threads))]
    for thread in pool:
        thread.start()
    try:
        for thread in pool:
            # A timed wait: Ctrl-C delivered to another of this process's threads interrupts no
            # untimed join, which would then hold the KeyboardInterrupt until the pool had finished.
            while thread.is_alive():
                thread.join(0.2)
    except KeyboardInterrupt:
        if stop is None:
            raise
        stop.set()
        for thread in pool:
            thread.join()
    return results
