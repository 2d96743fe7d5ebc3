"""``python -m grader``. Once the command has returned its status and every exit hook has run,
the process ends without Python's teardown of its modules: torch's alone took 0.35 s (2 cores),
which a learner waited for after every check."""
import atexit
import os
import sys

_status: list[int] = []


def _end_without_teardown() -> None:
    # Registered before anything is imported, so it runs after every other exit hook.
    if not _status or not isinstance(_status[0], int):  # the command raised: Python's own ending prints it
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be shown
            pass
    os._exit(_status[0])


atexit.register(_end_without_teardown)

from grader.app.ready import require  # noqa: E402 (after the hook above)

require()  # outside the course's environment: one line saying how to get into it, and exit 2
from grader.app.cli import main  # noqa: E402

_status.append(main())
sys.exit(_status[0])
