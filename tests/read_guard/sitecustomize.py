"""The read guard of tests/conftest.py, in the Python processes the tests start (conftest puts this
folder first on their PYTHONPATH): a process that opens or lists a file in the learner's own
folders (TP_TESTS_LEARNERS_OWN: the repository's puzzles/ and notebooks/) appends the path to
TP_TESTS_READ_LOG, and the test that started it fails. A test's result must not depend on what a
learner solved there (issue 44). Processes started with an environment of their own are not seen.
"""
import os
import sys

_OWN = tuple(folder for folder in os.environ.get("TP_TESTS_LEARNERS_OWN", "").split(os.pathsep) if folder)
_LOG = os.environ.get("TP_TESTS_READ_LOG")


def _audit(event: str, args: tuple) -> None:
    if event not in ("open", "os.listdir", "os.scandir"):
        return
    path = args[0] if args else None
    if isinstance(path, int):  # a file descriptor: its opening was seen
        return
    try:
        path = os.fsdecode(path if path is not None else ".")
    except (TypeError, ValueError):
        return
    if event == "open" and len(args) > 1 and args[1] is None and not os.path.isabs(path):
        return  # os.open, maybe relative to a dir_fd the event does not give (a submission's walk)
    path = os.path.abspath(path)
    if any(path == folder or path.startswith(folder + os.sep) for folder in _OWN):
        try:
            with open(_LOG, "a", encoding="utf-8") as log:  # its own open event names the log: not a folder above
                log.write(f"{path}\t{' '.join(sys.argv)[:300]}\n")
        except OSError:  # inside the sandbox the log is out of reach: the process that started it was seen
            pass


if _OWN and _LOG:
    sys.addaudithook(_audit)
