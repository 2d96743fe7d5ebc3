"""One size of ``--bench``, measured: how the learner's calls and the baselines are timed, and
what is watched and kept for the grader to check (runs inside the worker).

The learner's calls:

1. The first call runs on input set 0; what it wrote goes back to be judged.
2. Warm-up calls, then ``ROUNDS`` rounds of timed calls, each round alternating with the
   baselines'. Before every call the inputs are written again, from one of the grader's input
   sets drawn at random (``sets``: two where the request sends two), the outputs are filled
   with NaN (zeros where the puzzle accumulates into them), the L2 cache is flushed and its
   persisting lines cleared. So a result kept from an earlier call, or keyed by the inputs'
   addresses, is wrong on a later one.
3. Two timed calls are checked as the first was: one drawn at random, and the last. Each is
   on set 1 after a call on set 0 (the first call's set), so a result kept from the first
   call or from the call before is caught there; what each wrote goes back with its set's
   number. Which calls are checked, and each call's set, come from ``os.urandom`` as captured
   before any learner code ran. A checked call whose outputs are the same bytes as an earlier
   call's on the same set sends none (``same_as``): the same bytes on the same inputs get the
   same verdict, and three copies of a 1 GiB gradient would not fit one message.

Each call is timed twice (:class:`grader.sandbox.bench.guard.Clock`): by two events on the
learner's stream, and by the host's clock to a device-wide synchronise. The re-writing and
the flush run on the stream just before the call's first event, which keeps the GPU busy while
the host issues the call (a launch's latency is not timed, as with ``triton.testing.do_bench``'s
flush). Work on another stream shows as the second figure well above the first. A round's
figure is the median of its calls' event times, and the report keeps the fastest round;
``overhead_ms`` is the two clocks' gap around an empty call.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

import torch

from grader.sandbox.bench import guard

ROUNDS = 3
STATISTIC = "median"
METHOD = f"fastest of {ROUNDS} rounds, each the median of its timed calls"
WARM_MS, ROUND_MS = 25.0, 100.0  # GPU: warm-up, and one round of one subject's calls
MIN_CALLS, MAX_CALLS = 10, 500
FLUSH_BYTES = 256 << 20         # written before each call: several times any L2
GRAPH_MS, GRAPH_REPEATS, GRAPH_TIMINGS = 20.0, 1000, 10  # a graph of up to 1000 steps, about 20 ms, timed 10 times
_urandom = guard.urandom


@dataclass
class Subject:
    """What is timed: ``call`` once; ``refresh(s)`` before each call (set ``s``'s inputs in
    place, the outputs poisoned); ``snapshot()`` what the call left, as (described, blobs,
    tensors that were not plain ones): the learner's only."""

    call: Callable[[], object]
    refresh: Callable[[int], None]
    snapshot: Callable[[], tuple[list, list, list]] | None = None


def _bit() -> int:
    return _urandom(1)[0] & 1


def _below(n: int) -> int:
    return int.from_bytes(_urandom(8), "little") % n


def draw_sets(total: int, sets: int, checked: int) -> list[int]:
    """The input set of each call, at random; the ``checked`` call and the last one on set 1,
    after a call on set 0 (the first call's): a result kept from the first call, or from the
    call before, is wrong there."""
    order = [_bit() if sets > 1 else 0 for _ in range(total)]
    if sets > 1:
        for index in (checked, total - 1):
            if index > 0:
                order[index - 1], order[index] = 0, 1
    return order


class Measure:
    """One size's timings and watch, on ``device`` ("cuda", or "cpu": the test path, with the
    host's clock and the interpreter). ``calls``: timed calls per round (0: as many as
    ``ROUND_MS`` allows on a GPU)."""

    def __init__(self, device: str, sets: int, calls: int = 0) -> None:
        self.cuda = device == "cuda"
        self.sets, self.fixed = max(1, sets), calls
        self.clock = guard.Clock(device)
        self.l2 = guard.L2(self.clock.stream) if self.cuda else None
        self.scratch = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda") if self.cuda else None
        self.new_threads, self.thread_call, self.stream_changed = 0, -1, False
        self.switched: set[str] = set()
        self.l2_seen = (0, 0)
        guard.install()

    # ---- one call ----------------------------------------------------------------------
    def _time(self, subject: Subject, s: int, learner: bool, index: int) -> tuple[float, float]:
        """One call, after its prelude: set ``s``'s inputs, the outputs poisoned, L2 flushed."""
        l2 = None
        if self.cuda:
            self.l2.clear()
            l2 = self.l2.state()  # what the learner's call is held to: what clearing left

        def prelude():
            subject.refresh(s)
            if self.cuda:
                self.scratch.zero_()
        if not learner:
            return self.clock.time(subject.call, prelude)
        before, after = guard.threads(), []

        def call():
            with guard.Learner():
                subject.call()
        timed = self.clock.time(call, prelude, lambda: after.append(guard.threads()))
        self._watch(guard.started(before, after[0]), index, l2)
        return timed

    def _watch(self, new: int, index: int, l2=None) -> None:
        """After each learner call: threads it left running, another current stream, a switch
        thrown, persisting L2 raised by the call (above what clearing it before left)."""
        if new and not self.new_threads:  # the first call after which one was alive
            self.new_threads, self.thread_call = new, index
        if self.cuda:
            self.stream_changed |= self.clock.stream_id() != self.stream0
        if self.cuda and l2 is not None:
            (limit, window), (was_limit, was_window) = self.l2.state(), l2
            raised = (limit or 0) if (limit or 0) > (was_limit or 0) else 0, \
                (window or 0) if (window or 0) > (was_window or 0) else 0
            self.l2_seen = (max(self.l2_seen[0], raised[0]), max(self.l2_seen[1], raised[1]))
        self.switched |= set(guard.switched(self.switches0, guard.switches()))

    def _calls(self, subject: Subject, learner: bool) -> int:
        """Warm-up calls, and how many calls a round of ``subject`` gets."""
        if self.fixed:
            self._time(subject, 0, learner, -1)
            return self.fixed
        spent, warm = 0.0, 0
        while warm < 3 or spent < WARM_MS:
            spent += self._time(subject, _bit() if self.sets > 1 else 0, learner, -1)[1]
            warm += 1
        return max(MIN_CALLS, min(MAX_CALLS, round(ROUND_MS / (spent / warm))))

    # ---- one size ----------------------------------------------------------------------
    def run(self, subject: Subject, baselines: dict[str, Subject], after=None) -> tuple[dict, list]:
        """The learner's first call, its timed rounds against the baselines', and the watch.
        ``after()``: more timings of the learner's code (its figures join the result), run
        after the rounds and watched as they are."""
        for baseline in baselines.values():  # warmed (compiled) before anything is watched
            baseline.refresh(0)
            baseline.call()
        self.clock.sync()
        names0, self.switches0, seen0 = guard.watched(), guard.switches(), len(guard.audit_seen())
        self.stream0 = self.clock.stream_id()
        subject.refresh(0)
        l2 = None
        if self.cuda:
            self.l2.clear()
            l2 = self.l2.state()
        before = guard.threads()
        with guard.Learner():
            subject.call()
        self._watch(guard.started(before, guard.threads()), 0, l2)
        self.clock.sync()
        described, blobs, not_plain = subject.snapshot()
        kept = {"outputs": described}
        sent = {0: (0, list(blobs))}  # call (0: this first one) -> its input set and the bytes sent for it
        n = self._calls(subject, True)
        sizes = {name: self._calls(b, False) for name, b in baselines.items()}
        total = ROUNDS * n
        # never the last (checked anyway) nor the one before it (which is on set 0)
        checked = 1 + _below(total - 3) if total > 3 else total - 1
        order = draw_sets(total, self.sets, checked)
        taken: dict[str, list] = {"ms": [], "wall": [], **{name: [] for name in baselines}}
        gaps, checks = [], []
        for r in range(ROUNDS):
            events, walls = [], []
            for i in range(n):
                index = r * n + i
                event, wall = self._time(subject, order[index], True, index + 1)
                events.append(event)
                walls.append(wall)
                gaps.append(wall - event)
                if index in {checked, total - 1}:
                    got, raw, odd = subject.snapshot()
                    same = next((call for call, (on, before) in sent.items() if on == order[index] and before == raw),
                                None)
                    checks.append({"call": index + 1, "calls": total, "input_set": order[index], "outputs": got,
                                   "same_as": same})
                    if same is None:
                        blobs += raw
                        sent[index + 1] = (order[index], raw)
                    not_plain += odd
            taken["ms"].append(statistics.median(events))
            taken["wall"].append(statistics.median(walls))
            for name, baseline in baselines.items():
                taken[name].append(statistics.median(self._time(baseline, 0, False, -1)[0]
                                                      for _ in range(sizes[name])))
        fastest = min(range(ROUNDS), key=lambda r: taken["ms"][r])
        result = {**kept, "ms": taken["ms"][fastest], "ms_rounds": taken["ms"], "wall_ms": taken["wall"][fastest],
                  "calls": n, "gap_ms": statistics.median(gaps), "overhead_ms": self._overhead(),
                  "checked": checks,
                  **{name: min(values) for name, values in taken.items() if name not in ("ms", "wall")},
                  **{f"{name}_rounds": values for name, values in taken.items() if name not in ("ms", "wall")}}
        # ``after`` (the CUDA-graph timing) is skipped where the learner's code has replaced a
        # watched name already: the run is refused, and its figures would not be shown
        if after is not None and not guard.changed(names0, guard.watched()):
            before = guard.threads()
            with guard.Learner():
                result |= after()
            self._watch(guard.started(before, guard.threads()), total + 1)
        result["watch"] = self._report(names0, seen0, not_plain)
        return result, blobs

    def graph_ms(self, step: Callable[[], object], grads: list[torch.Tensor]) -> float:
        """``step`` captured in a CUDA graph and replayed, timed by this harness's own clock: the
        GPU's work without the host's (what ``triton.testing.do_bench_cudagraph`` measures, with
        no clock the learner's code could have replaced, and a bounded number of replays)."""
        def fresh():
            for x in grads:
                x.grad = None
            step()
        with guard._stream_context(guard._Stream()):  # captured work must not run on the timed stream first
            fresh()
            # the wall: another stream
            estimate = max(1e-3, statistics.median(self.clock.time(fresh)[1] for _ in range(3)))
            repeats = max(1, min(GRAPH_REPEATS, round(GRAPH_MS / estimate)))
            graph = guard._CUDAGraph()
            with guard._graph_capture(graph):
                for _ in range(repeats):
                    fresh()
        self.clock.sync()
        return statistics.median(self.clock.time(graph.replay)[0] for _ in range(GRAPH_TIMINGS)) / repeats

    def _overhead(self) -> float:
        """The two clocks' gap around an empty call: what the gap is without hidden work."""
        def prelude():
            if self.cuda:
                self.scratch.zero_()
        return statistics.median(w - e for e, w in (self.clock.time(lambda: None, prelude, guard.threads)
                                                     for _ in range(20)))

    def _report(self, names0: dict, seen0: int, not_plain: list) -> dict:
        seen = guard.audit_seen()[seen0:]
        return {"tampered": guard.changed(names0, guard.watched()), "switched": sorted(self.switched),
                "threads": self.new_threads, "thread_call": self.thread_call,
                "stream_changed": self.stream_changed, "l2_limit": self.l2_seen[0], "l2_window": self.l2_seen[1],
                "audit": [{"event": e, "file": f, "line": line} for e, f, line in seen[:8]],
                "not_plain": sorted(set(not_plain))}

    def time_alone(self, subject: Subject) -> float:
        """The median time of ``subject`` (the grader's own: a copy), as a round times it."""
        n = self._calls(subject, False)
        return statistics.median(self._time(subject, 0, False, -1)[0] for _ in range(n))
