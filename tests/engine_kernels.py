"""Kernels for tests/test_batched.py: one per form the batched engine must run as the serial
interpreter does. Imported in a subprocess as a learner's file (``range`` and ``print`` as the
worker gives them), never collected by pytest."""
import triton
import triton.language as tl


@triton.jit
def rows_softmax(x_ptr, y_ptr, N, B: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, B)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)


@triton.jit
def triangle_sums(x_ptr, y_ptr, N, B: tl.constexpr):
    """A loop whose trip count depends on the program (row + 1 columns), then an `if` on it."""
    row = tl.program_id(0)
    acc = tl.zeros([B], tl.float32)
    for start in range(0, row + 1, B):
        cols = start + tl.arange(0, B)
        acc += tl.load(x_ptr + row * N + cols, mask=(cols <= row) & (cols < N), other=0.0)
    if row % 3 == 0:
        acc = acc * 2
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def rows_per_program(x_ptr, y_ptr, ROWS, N, PER: tl.constexpr, B: tl.constexpr):
    """Every program the same number of rows from its own first row (the loop variable differs
    between programs); the last program fewer (a trip count of its own)."""
    pid = tl.program_id(0)
    cols = tl.arange(0, B)
    first = pid * PER
    for row in range(first, tl.minimum(first + PER, ROWS)):
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        tl.store(y_ptr + row * N + cols, x * row, mask=cols < N)


@triton.jit
def grid_stride(x_ptr, y_ptr, ROWS, N, B: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, B)
    for row in tl.range(pid, ROWS, tl.num_programs(0)):
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        tl.store(y_ptr + row * N + cols, tl.cumsum(x, axis=0), mask=cols < N)


@triton.jit
def early_exit(x_ptr, y_ptr, n, B: tl.constexpr):
    pid = tl.program_id(0)
    if pid * B >= n:
        return
    offs = pid * B + tl.arange(0, B)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.jit
def halving_while(x_ptr, y_ptr):
    """A `while` whose trip count comes from the data."""
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    steps = 0
    while v > 1.0:
        v = v / 2
        steps += 1
    tl.store(y_ptr + pid, v + steps)


@triton.jit
def count_then_branch(counter_ptr, y_ptr):
    """An atomic before a branch that splits the group: the group's first run is undone, so each
    program adds once."""
    pid = tl.program_id(0)
    tl.atomic_add(counter_ptr, 1)
    if pid % 2 == 0:
        tl.store(y_ptr + pid, pid * 10)
    else:
        tl.store(y_ptr + pid, -pid)


@triton.jit
def histogram(x_ptr, bins_ptr, n, NB: tl.constexpr, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(bins_ptr + v % NB, 1, mask=offs < n)


@triton.jit
def chunked_histogram(x_ptr, bins_ptr, n, NB: tl.constexpr, B: tl.constexpr, CHUNKS: tl.constexpr):
    """Several atomics per program on the same bins: they commute, and nobody reads their result."""
    for c in range(CHUNKS):
        offs = (tl.program_id(0) * CHUNKS + c) * B + tl.arange(0, B)
        v = tl.load(x_ptr + offs, mask=offs < n, other=0)
        tl.atomic_add(bins_ptr + v % NB, 1, mask=offs < n)


@triton.jit
def float_accumulate(x_ptr, out_ptr, n, B: tl.constexpr, CHUNKS: tl.constexpr):
    """Float atomics, several per program into one element: their order decides the rounding."""
    for c in range(CHUNKS):
        offs = (tl.program_id(0) * CHUNKS + c) * B + tl.arange(0, B)
        tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


@triton.jit
def ticket(counter_ptr, y_ptr):
    """Each program takes a ticket from a counter and stores it: what an atomic returned, read."""
    pid = tl.program_id(0)
    for _ in range(2):
        t = tl.atomic_add(counter_ptr, 1)
        tl.store(y_ptr + pid, t)


@triton.jit
def locked_sum(x_ptr, acc_ptr, lock_ptr, N, B: tl.constexpr):
    """A spin lock around a read-modify-write of a shared row, as Triton's layer-norm tutorial does."""
    row = tl.program_id(0)
    cols = tl.arange(0, B)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    acc = tl.load(acc_ptr + cols, mask=cols < N, other=0.0)
    tl.store(acc_ptr + cols, acc + x, mask=cols < N)
    tl.atomic_xchg(lock_ptr, 0)


@triton.jit
def reads_neighbour(x_ptr, y_ptr, n, B: tl.constexpr):
    """Each program stores its block, then reads the next program's: across programs, out of order."""
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    nxt = offs + B
    tl.store(y_ptr + offs, tl.load(y_ptr + nxt, mask=nxt < n, other=0.0) + 1.0, mask=offs < n)


@triton.jit
def reads_previous(x_ptr, y_ptr, z_ptr, n, B: tl.constexpr):
    """Each program stores its block, then loads the previous program's: in the serial order (no
    conflict), yet a crossing of programs."""
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    before = offs - B
    tl.store(z_ptr + offs, tl.load(y_ptr + before, mask=(before >= 0) & (offs < n), other=0.0), mask=offs < n)


@triton.jit
def same_element(y_ptr, B: tl.constexpr):
    """Every program stores its id over one block: overlapping stores of different values."""
    tl.store(y_ptr + tl.arange(0, B), tl.zeros([B], tl.int32) + tl.program_id(0))


@triton.jit
def reads_unwritten(y_ptr, z_ptr, B: tl.constexpr):
    """Loads an output nobody stored yet (the NaN fill), then stores."""
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    tl.store(z_ptr + offs, tl.load(y_ptr + offs) + 1.0)


@triton.jit
def strays_in_one_program(x_ptr, y_ptr, n, B: tl.constexpr):
    """Program 3 (only) reads past the end: the first program out of bounds is what is reported."""
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    extra = tl.where(pid == 3, 1 << 30, 0)  # far past every tensor, wherever the allocator put them
    x = tl.load(x_ptr + offs + extra, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def prints(x_ptr, B: tl.constexpr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid * B + tl.arange(0, B))
    print("program", pid)
    tl.device_print("x", x)
    if pid % 2 == 0:
        print("even")


@triton.jit
def shapes(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    """reshape, permute, .T, expand_dims, broadcast, cat, join, split, gather, flip, sort, interleave."""
    pid = tl.program_id(0)
    base = x_ptr + pid * M * N
    x = tl.load(base + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    a = tl.reshape(x, [N, M])
    b = tl.permute(x, (1, 0)) + x.T
    c = tl.cat(tl.ravel(a), tl.ravel(b), can_reorder=True)
    lo, hi = tl.split(tl.join(x, x * 2))
    idx = (tl.arange(0, M)[:, None] + tl.arange(0, N)[None, :] + pid) % N
    g = tl.gather(x, idx, axis=1)
    s = tl.sort(tl.ravel(x + g))
    f = tl.flip(s, 0)
    i = tl.interleave(lo, hi)
    total = tl.sum(c) + tl.sum(f * tl.arange(0, M * N)) + tl.sum(i) + tl.max(tl.ravel(b))
    tl.store(y_ptr + pid, total)


@triton.jit
def _pick(a, ia, b, ib):
    keep = a > b
    return tl.where(keep, a, b), tl.where(keep, ia, ib)


@triton.jit
def _first_nonzero(a, b):
    return tl.where(a != 0, a, b)


@triton.jit
def reductions(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid * M * N + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    out = y_ptr + pid * 16
    tl.store(out + 0, tl.sum(x))
    tl.store(out + 1, tl.sum(tl.sum(x, axis=1, keep_dims=True)))
    tl.store(out + 2, tl.max(tl.max(x, axis=0), axis=0))
    tl.store(out + 3, tl.argmax(tl.ravel(x), axis=0).to(tl.float32))
    tl.store(out + 4, tl.argmin(x, axis=1).to(tl.float32).sum())
    v, i = tl.reduce((x, tl.broadcast_to(tl.arange(0, N)[None, :], (M, N))), 1, _pick)
    tl.store(out + 5, tl.sum(v) + tl.sum(i).to(tl.float32))
    tl.store(out + 6, tl.sum(tl.cumsum(x, axis=0)))
    tl.store(out + 7, tl.sum(tl.cumsum(x, axis=1, reverse=True)))
    tl.store(out + 8, tl.sum(tl.associative_scan(tl.where(x > 0.5, 0.0, x), 1, _first_nonzero)))
    tl.store(out + 9, tl.sum(tl.trans(x) * 3.0))
    tl.store(out + 10, tl.xor_sum(tl.ravel(x.to(tl.int32, bitcast=True)), axis=0).to(tl.float32))
    tl.store(out + 11, tl.min(x).to(tl.float32))


@triton.jit
def dots(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    pid = tl.program_id(0)
    a = tl.load(a_ptr + pid * M * K + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    acc = tl.dot(a, b)
    acc = tl.dot(a.to(tl.float16), b.to(tl.float16), acc)
    acc += tl.dot(a, tl.trans(a), input_precision="ieee")
    tl.store(c_ptr + pid * M * N + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], acc)


@triton.jit
def randoms(y_ptr, seed, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    r = tl.rand(seed, offs) + tl.randn(seed + 1, offs) + tl.randint(seed, offs).to(tl.float32) * 1e-9
    tl.store(y_ptr + offs, r)


@triton.jit
def block_pointers(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(y_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    for _ in range(0, N, BN):
        tl.store(dst, tl.load(src, boundary_check=(0, 1), padding_option="zero") * 2, boundary_check=(0, 1))
        src = tl.advance(src, (0, BN))
        dst = tl.advance(dst, (0, BN))


@triton.jit
def descriptors(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(y_ptr, [M, N], [N, 1], [BM, BN])
    for col in range(0, N, BN):
        dst.store([pid * BM, col], src.load([pid * BM, col]) + 1.0)


@triton.jit
def uniform_store(x_ptr, y_ptr):
    """Every program stores the same value to one element, and an atomic max of its id."""
    tl.store(y_ptr, tl.load(x_ptr))
    tl.atomic_max(y_ptr + 1, tl.program_id(0).to(tl.float32))


@triton.jit
def three_axes(y_ptr):
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    n0, n1 = tl.num_programs(0), tl.num_programs(1)
    tl.store(y_ptr + x + n0 * (y + n1 * z), x * 100 + y * 10 + z)


@triton.jit
def writes_input(x_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
