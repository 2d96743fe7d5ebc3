"""Whether bubblewrap can make the grader's sandbox here (grader/channel/isolation.py). Where it
cannot, the grader grades a learner's own kernels without one, and `batch` refuses."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from paths import ROOT


def _sandbox_probe(outer: list[str]) -> str:
    code = "from grader.channel.isolation import sandbox_available; print(sandbox_available())"
    done = subprocess.run([*outer, sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return done.stdout.strip() or done.stderr


def test_a_container_that_refuses_bwrap_a_new_proc_grades_without_the_sandbox():
    """Docker and Podman mask parts of /proc. bwrap allowed its namespaces there (Docker with
    seccomp=unconfined) still cannot mount a new /proc, and every worker failed to start, reported
    as "the kernel crashed its process". A bwrap sandbox around this test masks /proc alike (bwrap
    makes parts of its /proc read-only), and the grader must find no sandbox inside it."""
    from grader.channel.isolation import sandbox_available
    if not sandbox_available():
        if os.environ.get("TP_REQUIRE_SANDBOX"):
            raise RuntimeError("TP_REQUIRE_SANDBOX is set but bubblewrap cannot run here")
        pytest.skip("bubblewrap cannot run here")
    outer = ["bwrap", "--unshare-all", "--dev-bind", "/", "/", "--proc", "/proc", "--chdir", str(ROOT)]
    assert _sandbox_probe(outer) == "False"
    assert _sandbox_probe(["bwrap", "--dev-bind", "/", "/", "--chdir", str(ROOT)]) == "True"  # bwrap itself nests
