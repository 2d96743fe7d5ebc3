# Tries the network: a listener on the grader's machine, and the outside world.
import socket

import torch

EXPECT_STATUS = "fail"
EXPECT_KIND = "exception"
EXPECT_SAYS = "no network"


def _reach(host, port):
    try:
        with socket.create_connection((host, port), timeout=2) as s:
            s.sendall(b"escaped")
        return True
    except OSError:
        return False


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        reached = [h for h, p in (("127.0.0.1", int("@@PORT@@")), ("pypi.org", 443), ("1.1.1.1", 53)) if _reach(h, p)]
        raise RuntimeError("reached: " + ", ".join(reached) if reached else "no network")

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("unreachable")
