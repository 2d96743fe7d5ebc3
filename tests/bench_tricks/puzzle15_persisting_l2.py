# Persisting L2: a carve-out of the L2 cache and an access policy window over the input keep
# it in cache across calls, past the bench's flush (through the driver, with ctypes).
import ctypes
import struct

import torch

from puzzle15_weighted_sum_autograd import WeightedSumFunc as Honest

EXPECT = "REJECTED"
EXPECT_SAYS = "set aside L2 cache for persisting lines"
NEEDS = "cuda"


def _persist(x):
    cuda = ctypes.CDLL("libcuda.so.1")
    size = min(x.numel() * x.element_size(), 16 << 20)  # within any GPU's largest carve-out
    cuda.cuCtxSetLimit(ctypes.c_int(6), ctypes.c_size_t(size))  # CU_LIMIT_PERSISTING_L2_CACHE_SIZE
    window = (ctypes.c_char * 64)()
    struct.pack_into("<QQfii", window, 0, x.data_ptr(), size, 1.0, 2, 1)  # hit: persisting; miss: streaming
    cuda.cuStreamSetAttribute(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), ctypes.c_int(1), window)


class WeightedSumFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        _persist(x)
        return Honest.forward(ctx, x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        return Honest.backward(ctx, grad_output)
