# Tries to read what is not its own: the course's solutions, the report folder, the host's
# passwd file, other students' sanitised copies, the user's home. Reports what it could read
# through its error message, which the test checks.
import glob
import os

import torch

EXPECT_STATUS = "fail"
EXPECT_KIND = "exception"
EXPECT_SAYS = "read nothing"


def _readable():
    found = []
    candidates = ["@@COURSE@@/solutions/puzzle13_weighted_sum_forward.py", "@@OUT@@", "/etc/shadow", "/root", "@@MARK@@"]
    # Other students' sanitised copies sit beside this one in a batch.
    own = os.path.dirname(os.path.abspath(__file__))
    candidates += [p for p in glob.glob("/tmp/triton-puzzles-batch-*/*") if not own.startswith(p)]
    try:  # the sandbox has a passwd file of its own, naming only its user
        with open("/etc/passwd") as f:
            if "root:" in f.read():
                found.append("the host's /etc/passwd")
    except OSError:
        pass
    for path in candidates:
        try:
            if os.path.isdir(path):
                if os.listdir(path):
                    found.append(path)
            else:
                with open(path, "rb") as f:
                    f.read(1)
                found.append(path)
        except OSError:
            pass
    return found


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        found = _readable()
        raise RuntimeError("read: " + ", ".join(found) if found else "read nothing")

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("unreachable")
