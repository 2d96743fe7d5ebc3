# Leaves processes behind: a double-forked daemon in a session of its own, which keeps trying to
# rewrite the batch's grades.csv after the reports are written, and a plain `sleep` child.
import os
import time

import torch

EXPECT_STATUS = "fail"


def _daemon():
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    try:
        os.execvp("sleep", ["sleep", "@@SLEEP@@"])
    except OSError:
        pass
    for _ in range(120):
        try:
            with open("@@OUT@@/grades.csv", "w") as f:
                f.write("student,total\ndaemon,17\n")
        except OSError:
            pass
        time.sleep(0.5)
    os._exit(0)


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        _daemon()
        os.spawnlp(os.P_NOWAIT, "sleep", "sleep", "@@SLEEP@@")
        raise RuntimeError("daemon started")

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("unreachable")
