# Tries to write where it must not: the report folder, a folder outside the sandbox, the
# course, its own submission, and the host's /tmp.
import os

import torch

EXPECT_STATUS = "fail"
EXPECT_KIND = "exception"
EXPECT_SAYS = "wrote nothing"


def _write(path):
    try:
        with open(path, "w") as f:
            f.write("forged\n")
        return True
    except OSError:
        return False


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        targets = ["@@OUT@@/grades.csv", "@@MARK@@/escaped.txt", "@@COURSE@@/puzzles/puzzle01_constant_add.py",
                   os.path.abspath(__file__)]
        written = [t for t in targets if _write(t)]
        _write("/tmp/@@SLEEP@@-written-in-sandbox")  # allowed: the sandbox's private /tmp
        raise RuntimeError("wrote: " + ", ".join(written) if written else "wrote nothing")

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("unreachable")
