"""Every puzzle's learner code runs in workers of its own, forked from a zygote that never runs any:
what one puzzle's file patches, plants or leaves running cannot change another puzzle's verdict,
and a worker that kills its zygote costs time, never a verdict."""
from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from conftest import COURSE, ROOT
from grader.channel.isolation import sandbox_available
from grader.judge.classroom import grade_student
from grader.judge.options import Options
from grader.source.intake import prepare_class

# Puzzle 15's wrapper, run while it is recorded, with a payload before its honest forward.
ATTACKER = (ROOT / "solutions" / "puzzle15_weighted_sum_autograd.py").read_text().replace(
    "    def forward(ctx, x, weight):\n", "    def forward(ctx, x, weight):\n        _payload()\n", 1)

# Every later puzzle of the student fails, were the worker shared: its operations are replaced.
PATCH_THE_WORKER = '''

def _payload():
    from grader.channel import wire
    from grader.sandbox import worker
    broken = lambda self, msg, blobs: (wire.Failure("exception", error="patched by puzzle 15"), [])
    worker.Worker.op_run = worker.Worker.op_replay = worker.Worker.op_record = broken
'''

# A process left behind, which would kill every worker started after it.
LEAVE_A_KILLER = '''

def _payload():
    import os
    import signal
    import time
    if os.fork() == 0:
        os.setsid()
        mine = os.getpid()
        for _ in range(3000):  # @@SLEEP@@: the test finds it by this number, were it left running
            for pid in filter(str.isdigit, os.listdir("/proc")):
                if int(pid) not in (1, mine):
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.01)
        os._exit(0)
'''

# The zygote that forked this worker, killed: the grader must start another for the next puzzle.
KILL_THE_ZYGOTE = '''

def _payload():
    import os
    import signal
    os.kill(os.getppid(), signal.SIGKILL)
'''

# The attacker's own verdict: its payload ran. A patched recording still records, and a fresh worker
# replays it; a killer takes the recording worker down with it; a killed zygote, the same.
EXPECT_OF_THE_ATTACKER = {PATCH_THE_WORKER: ("pass",), LEAVE_A_KILLER: ("fail",), KILL_THE_ZYGOTE: ("fail",)}

if not sandbox_available():
    if os.environ.get("TP_REQUIRE_SANDBOX"):
        raise RuntimeError("TP_REQUIRE_SANDBOX is set but bubblewrap cannot run here")
    pytest.skip("bubblewrap is not available: these attacks need the sandbox's PID namespace",
                allow_module_level=True)


def _student(folder: Path, payload: str, token: str) -> None:
    puzzles = folder / "puzzles"
    puzzles.mkdir(parents=True)
    (puzzles / "puzzle15_weighted_sum_autograd.py").write_text(ATTACKER + payload.replace("@@SLEEP@@", token))
    for later in ("puzzle18_fused_softmax.py", "puzzle22_rms_norm.py"):  # graded after puzzle 15
        shutil.copy(ROOT / "solutions" / later, puzzles / later)


@pytest.mark.slow  # grades three puzzles of three students in the sandbox
@pytest.mark.parametrize("payload", [PATCH_THE_WORKER, LEAVE_A_KILLER, KILL_THE_ZYGOTE],
                         ids=["patch_the_worker", "leave_a_killer", "kill_the_zygote"])
def test_one_puzzles_code_never_changes_anothers_verdict(tmp_path, payload):
    token = str(random.randint(10_000_000, 99_999_999))
    _student(tmp_path / "class" / "mallory", payload, token)
    options = Options(timeout=30, sandbox="on", library=(str(ROOT / "solutions"),))
    (student,) = prepare_class(tmp_path / "class", COURSE, tmp_path / "intake")
    result = grade_student(COURSE, student, options)
    verdicts = {r.puzzle: r for r in result.results}
    assert verdicts["puzzle15"].status in EXPECT_OF_THE_ATTACKER[payload], verdicts["puzzle15"].message
    for later in ("puzzle18", "puzzle22"):
        assert verdicts[later].status == "pass", verdicts[later].message
    left = [pid for pid in filter(str.isdigit, os.listdir("/proc")) if _holds(pid, token)]
    assert not left, f"processes left behind: {left}"


def _holds(pid: str, token: str) -> bool:
    try:
        return token in Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
    except OSError:
        return False
