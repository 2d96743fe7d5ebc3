"""A synthetic class for the similarity pass: 40 students, each solving puzzles 2, 7 and 19 their
own way, and four pairs who copied (one pair verbatim, one with every variable renamed, one with
independent statements reordered, one disguised every way at once: reordered, its loop written
over chunk numbers instead of offsets or the other way round, a statement moved into an
``@triton.jit`` helper, dead code added, and every variable renamed).

An honest student's kernel is put together from choices real solutions differ in: names, a
program id kept in a variable or not, masks named or inline (and which way round), pointers
built before the loop or in it, a loop over starts or over chunk numbers, a 1-D or a 2-D
accumulator, `other=` or `tl.where`, a scalar or a per-lane running maximum, multiplying by
the inverse or dividing. Every combination is a correct kernel (tests/test_similarity.py grades
a few). ``build(folder)`` writes the class as ``batch`` reads it and returns the copied pairs.
"""
from __future__ import annotations

import ast
import copy
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUZZLES = {"puzzle02": "puzzle02_constant_add_blocked.py", "puzzle07": "puzzle07_long_sum.py",
           "puzzle19": "puzzle19_online_softmax.py"}
STUDENTS = 40
# (original, copier, how): the copier hands in the original's kernels, disguised.
COPIES = (("student05", "student17", "verbatim"), ("student11", "student29", "renamed"),
          ("student22", "student36", "reordered"), ("student08", "student33", "disguised"))

NAMES = {  # what honest students call things
    "pid": ("pid", "program", "block_id", "p", "row_block", "bid"),
    "offs": ("offsets", "offs", "idx", "i", "indices", "lanes"),
    "mask": ("mask", "m", "valid", "in_bounds", "keep"),
    "x": ("x", "vals", "values", "data", "v"),
    "z": ("z", "out", "result", "y", "res"),
    "rows": ("rows", "row_ids", "r", "row_offsets", "i_rows"),
    "cols": ("cols", "col_ids", "c", "col_offsets", "j_cols"),
    "acc": ("acc", "total", "running", "sums", "accum"),
    "tile": ("tile", "chunk", "block", "xs", "part"),
    "start": ("start", "k", "col0", "begin", "off"),
    "row": ("row", "r", "pid", "row_id", "n"),
    "m": ("m", "running_max", "mx", "max_so_far", "m_i"),
    "s": ("s", "denom", "l", "total", "l_i"),
}


class _Student:
    """One student's habits: their names, and how they write the small things (which operand
    comes first, `axis=0` or `0`, a mask kept in a variable or written where it is used)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.names = {role: self.rng.choice(pool) for role, pool in NAMES.items()}

    def pick(self, *options):
        return self.rng.choice(options)

    def __getitem__(self, role: str) -> str:
        return self.names[role]

    def add(self, a: str, b: str) -> str:
        return self.pick(f"{a} + {b}", f"{b} + {a}")

    def mul(self, a: str, b: str) -> str:
        return self.pick(f"{a} * {b}", f"{b} * {a}")

    def lt(self, a: str, b: str) -> str:
        return self.pick(f"{a} < {b}", f"{b} > {a}")

    def reduce(self, fn: str, x: str) -> str:
        return self.pick(f"{fn}({x}, axis=0)", f"{fn}({x}, 0)")


def puzzle02(st: _Student, reordered: bool = False) -> list[str]:
    pid, offs, mask, x, z = st["pid"], st["offs"], st["mask"], st["x"], st["z"]
    program = st.pick("tl.program_id(0)", "tl.program_id(axis=0)")
    start_style, named_mask = st.pick("pid", "start", "inline"), st.pick(True, False)
    other, pointers, named_sum = st.pick("", ", other=0.0", ", other=0"), st.pick("inline", "named"), st.pick(True, False)
    ten = st.pick("10.0", "10", "10.0")
    lanes = "tl.arange(0, B0)"
    body = {"pid": [f"{pid} = {program}", f"{offs} = {st.add(st.mul(pid, 'B0'), lanes)}"],
            "start": [f"block_start = {st.mul(program, 'B0')}", f"{offs} = {st.add('block_start', lanes)}"],
            "inline": [f"{offs} = {st.add(lanes, st.mul('B0', program))}"]}[start_style]
    test = st.lt(offs, "N0")
    setup = []
    if named_mask:
        setup.append(f"{mask} = {test}")
        test = mask
    source, target = st.add("x_ptr", offs), st.add("z_ptr", offs)
    if pointers == "named":
        setup += [f"src = {source}", f"dst = {target}"]
        source, target = "src", "dst"
    body += list(reversed(setup)) if reordered else setup
    body.append(f"{x} = tl.load({source}, mask={test}{other})")
    value = st.add(x, ten)
    if named_sum:
        body.append(f"{z} = {value}")
        value = z
    body.append(f"tl.store({target}, {value}, mask={test})")
    return ["@triton.jit", "def add_mask2_kernel(x_ptr, z_ptr, N0, B0: tl.constexpr):", *_indent(body)]


def puzzle07(st: _Student, reordered: bool = False) -> list[str]:
    pid, rows, cols, acc, tile, start = st["pid"], st["rows"], st["cols"], st["acc"], st["tile"], st["start"]
    row_mask = st.pick("row_mask", "rmask", "valid_rows")
    keep_pid = st.pick(True, False)
    zeros = st.pick("tl.zeros([B0], dtype=tl.float32)", "tl.zeros((B0,), tl.float32)", "tl.zeros([B0], tl.float32)")
    two_d, loop, mask2 = st.pick(False, False, True), st.pick("step", "count", "hoisted"), st.pick("rowmask", "full")
    base, fill, accumulate = st.pick(False, True), st.pick("other=0.0", "other=0", "where"), st.pick("+=", "= +")
    named_tile_mask, axis = st.pick(True, False), st.pick("axis=1", "1")
    first = ([f"{pid} = tl.program_id(0)", f"{rows} = {st.add(st.mul(pid, 'B0'), 'tl.arange(0, B0)')}"] if keep_pid
             else [f"{rows} = {st.add('tl.program_id(0) * B0', 'tl.arange(0, B0)')}"])
    independent = [f"{row_mask} = {st.lt(rows, 'N0')}",
                   f"{acc} = tl.zeros([B0, B1], dtype=tl.float32)" if two_d else f"{acc} = {zeros}"]
    if base:
        independent.append(f"row_ptr = {st.add('x_ptr', st.mul(rows, 'T'))}")
    if loop == "hoisted":
        independent.append("lanes = tl.arange(0, B1)")
    body = first + (list(reversed(independent)) if reordered else independent)
    header, col_line = {
        "step": (f"for {start} in range(0, T, B1):", f"{cols} = {st.add(start, 'tl.arange(0, B1)')}"),
        "count": (f"for {start} in range(tl.cdiv(T, B1)):", f"{cols} = {st.add(st.mul(start, 'B1'), 'tl.arange(0, B1)')}"),
        "hoisted": (f"for {start} in range(0, T, B1):", f"{cols} = {st.add(start, 'lanes')}")}[loop]
    test = (f"{row_mask}[:, None] & ({st.lt(cols, 'T')})[None, :]" if mask2 == "rowmask"
            else f"({st.lt(rows + '[:, None]', 'N0')}) & ({st.lt(cols + '[None, :]', 'T')})")
    pointer = (st.add("row_ptr[:, None]", f"{cols}[None, :]") if base
               else st.add(st.add("x_ptr", st.mul(f"{rows}[:, None]", "T")), f"{cols}[None, :]"))
    inner = [col_line]
    if named_tile_mask:
        inner.append(f"tile_mask = {test}")
        test = "tile_mask"
    if fill == "where":
        inner.append(f"{tile} = tl.where({test}, tl.load({pointer}, mask={test}), 0.0)")
    else:
        inner.append(f"{tile} = tl.load({pointer}, mask={test}, {fill})")
    added = tile if two_d else f"tl.sum({tile}, {axis})"
    inner.append(f"{acc} += {added}" if accumulate == "+=" else f"{acc} = {st.add(acc, added)}")
    body += [header, *_indent(inner)]
    if two_d:
        body.append(f"{acc} = tl.sum({acc}, {axis})")
    body.append(f"tl.store({st.add('z_ptr', rows)}, {acc}, mask={st.pick(row_mask, st.lt(rows, 'N0'))})")
    return ["@triton.jit", "def sum_kernel(x_ptr, z_ptr, N0, N1, T, B0: tl.constexpr, B1: tl.constexpr):",
            *_indent(body)]


def puzzle19(st: _Student, reordered: bool = False) -> list[str]:
    row, cols, m, s, tile, start = st["row"], st["cols"], st["m"], st["s"], st["tile"], st["start"]
    neg = st.pick('float("-inf")', "-float('inf')")
    per_lane, bases, loop = st.pick(False, True), st.pick(True, False), st.pick("step", "count")
    cast, update, normalise = st.pick("on load", "after"), st.pick("one line", "named"), st.pick("inverse", "divide")
    idx, named_mask, new = st.pick("idx", "offs", "pos", "j"), st.pick(True, False), st.pick("new_max", "m_new", "mx")
    row_offset = st.mul(row, "T")
    setup = [f"{cols} = tl.arange(0, B1)"]
    if bases:
        setup += [f"x_row = {st.add('x_ptr', row_offset)}", f"z_row = {st.add('z_ptr', row_offset)}"]
        src, dst = "x_row", "z_row"
    else:
        src, dst = f"x_ptr + {row_offset}", f"z_ptr + {row_offset}"
    if per_lane:
        # a finite start: a lane no chunk reaches (T < B1) must not make exp(-inf + inf) = NaN
        setup += [f"{m} = tl.full([B1], -1e30, tl.float32)", f"{s} = tl.zeros([B1], dtype=tl.float32)"]
    else:
        setup += [f"{m} = {neg}", f"{s} = {st.pick('0.0', '0.')}"]
    body = [f"{row} = tl.program_id(0)", *(list(reversed(setup)) if reordered else setup)]
    first_index = (f"{idx} = {st.add(start, cols)}" if loop == "step"
                   else f"{idx} = {st.add(st.mul(start, 'B1'), cols)}")
    header = f"for {start} in range(0, T, B1):" if loop == "step" else f"for {start} in range(tl.cdiv(T, B1)):"
    test = st.lt(idx, "T")

    def loop_lines(inner: list[str], test: str) -> list[str]:
        head = [first_index] + ([f"mask = {test}"] if named_mask else [])
        return [header, *_indent(head + inner)]

    def load(test: str) -> list[str]:
        pointer = st.add(src, idx)
        if cast == "on load":
            return [f"{tile} = tl.load({pointer}, mask={test}, other={neg}).to(tl.float32)"]
        return [f"{tile} = tl.load({pointer}, mask={test}, other={neg})", f"{tile} = {tile}.to(tl.float32)"]

    test = "mask" if named_mask else test
    if per_lane:
        first = load(test) + [f"{new} = tl.maximum({m}, {tile})",
                              f"{s} = {st.mul(s, f'tl.exp({m} - {new})')} + tl.exp({tile} - {new})", f"{m} = {new}"]
        body += loop_lines(first, st.lt(idx, "T")) + [f"row_max = {st.reduce('tl.max', m)}",
                                                      f"row_sum = {st.reduce('tl.sum', f'{s} * tl.exp({m} - row_max)')}"]
        m, s = "row_max", "row_sum"
    elif update == "one line":
        body += loop_lines(load(test) + [
            f"{new} = tl.maximum({m}, {st.reduce('tl.max', tile)})",
            f"{s} = {st.add(st.mul(s, f'tl.exp({m} - {new})'), st.reduce('tl.sum', f'tl.exp({tile} - {new})'))}",
            f"{m} = {new}"], st.lt(idx, "T"))
    else:
        body += loop_lines(load(test) + [
            f"{new} = tl.maximum({st.reduce('tl.max', tile)}, {m})", f"scale = tl.exp({m} - {new})",
            f"p = tl.exp({tile} - {new})", f"{s} = {st.add(st.mul(s, 'scale'), st.reduce('tl.sum', 'p'))}",
            f"{m} = {new}"], st.lt(idx, "T"))
    if normalise == "inverse":
        body.append(f"inv = {st.pick('1.0', '1')} / {s}")
        value = st.mul(f"tl.exp({tile} - {m})", "inv")
    else:
        value = f"tl.exp({tile} - {m}) / {s}"
    body += loop_lines(load(test) + [f"tl.store({st.add(dst, idx)}, {value}, mask={test})"], st.lt(idx, "T"))
    return ["@triton.jit", "def online_softmax_kernel(x_ptr, z_ptr, N0, T, B1: tl.constexpr):", *_indent(body)]


MAKERS = {"puzzle02": puzzle02, "puzzle07": puzzle07, "puzzle19": puzzle19}


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


class _Rename(ast.NodeTransformer):
    """Every local name to another: what a copier does to hide a copy."""

    def __init__(self, keep: set[str]) -> None:
        self.keep, self.given = keep, {}

    def _new(self, name: str) -> str:
        if name in self.keep:
            return name
        return self.given.setdefault(name, f"{name[:1]}{'q' * (len(self.given) % 3 + 1)}{len(self.given)}")

    def visit_Name(self, node):
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node):
        return node  # the signature is the puzzle's


HELPER = "_part"  # the disguised copy's helper, and its puzzle's number: one file may hold them all


def renamed(code: str) -> str:
    tree = ast.parse(code)
    params = {a.arg for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for a in f.args.args}
    helpers = {f.name for f in tree.body if isinstance(f, ast.FunctionDef) and f.name.startswith(HELPER)}
    return ast.unparse(_Rename(params | helpers | {"tl", "triton", "range", "float"}).visit(tree)) + "\n"


class _Scale(ast.NodeTransformer):
    """The loop variable ``name`` as ``name * B1``: a loop over offsets turned into one over chunks."""

    def __init__(self, name: str) -> None:
        self.name = name

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return ast.BinOp(ast.Name(self.name, ast.Load()), ast.Mult(), ast.Name("B1", ast.Load()))
        return node


class _Unscale(ast.NodeTransformer):
    """``name * B1`` (either way round) as ``name``: a loop over chunks turned into one over offsets."""

    def __init__(self, name: str) -> None:
        self.name = name

    def visit_BinOp(self, node):
        node = self.generic_visit(node)
        sides = {ast.unparse(node.left), ast.unparse(node.right)}
        return ast.Name(self.name, ast.Load()) if isinstance(node.op, ast.Mult) and sides == {self.name, "B1"} else node


def _flip_loops(tree: ast.Module) -> None:
    for loop in [n for n in ast.walk(tree) if isinstance(n, ast.For)]:
        name, header = loop.target.id, ast.unparse(loop.iter)
        if header == "range(0, T, B1)":
            loop.iter = ast.parse("range(tl.cdiv(T, B1))", mode="eval").body
            loop.body = [_Scale(name).visit(s) for s in loop.body]
        elif header == "range(tl.cdiv(T, B1))":
            loop.iter = ast.parse("range(0, T, B1)", mode="eval").body
            loop.body = [_Unscale(name).visit(s) for s in loop.body]


def _free_names(node: ast.AST) -> list[str]:
    names = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id not in ("tl", "float") and n.id not in names:
            names.append(n.id)
    return names


class _Renamer(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node):
        node.id = self.names.get(node.id, node.id)
        return node


def disguised(code: str, helper_name: str = HELPER) -> str:
    """A copy hidden every way at once (the code comes reordered): the loop over the other form,
    the first loaded value computed by an ``@triton.jit`` helper, dead code, every name renamed."""
    tree = ast.parse(code)
    kernel_def = tree.body[0]
    _flip_loops(tree)
    loop = next(n for n in ast.walk(kernel_def) if isinstance(n, ast.For))
    index, stmt = next((i, s) for i, s in enumerate(loop.body) if isinstance(s, ast.Assign)
                       and "tl.load" in ast.unparse(s.value))
    args = _free_names(stmt.value)
    params = {name: f"arg{i}" for i, name in enumerate(args)}  # the helper's own names for them
    body = _Renamer(params).visit(copy.deepcopy(stmt.value))
    helper = ast.parse(f"@triton.jit\ndef {helper_name}({', '.join(params.values())}):\n    loaded = {ast.unparse(body)}\n"
                       f"    return loaded\n").body[0]
    loop.body[index] = ast.parse(f"{ast.unparse(stmt.targets[0])} = {helper_name}({', '.join(args)})").body[0]
    loop.body.insert(index, ast.parse("unused_step = B1 * 2").body[0])
    kernel_def.body[1:1] = ast.parse("debug = tl.arange(0, B1) + 1\nif False:\n    tl.device_print('row', debug)").body
    tree.body.insert(0, helper)
    return renamed(ast.unparse(tree))


def kernel(puzzle_id: str, student: str, how: str = "", seed: int = 0) -> str:
    number = int(student[len("student"):])
    st = _Student(seed * 1_000_003 + number * 1000 + int(puzzle_id[-2:]))
    code = "\n".join(MAKERS[puzzle_id](st, reordered=how in ("reordered", "disguised"))) + "\n"
    if how == "disguised" and puzzle_id != "puzzle02":  # puzzle 2 has no loop: too short to be flagged anyway
        return disguised(code, f"{HELPER}{puzzle_id[-2:]}")
    return renamed(code) if how in ("renamed", "disguised") else code


def puzzle_file(puzzle_id: str, code: str, course: Path = ROOT) -> str:
    """The puzzle file of the course at ``course`` with the learner's part replaced by ``code``."""
    lines = (course / "puzzles" / PUZZLES[puzzle_id]).read_text().splitlines()
    opening = next(i for i, line in enumerate(lines) if line.startswith("# ---- your part"))
    closing = next(i for i in range(opening + 1, len(lines)) if lines[i].startswith("# ------"))
    return "\n".join(lines[:opening + 1] + code.rstrip("\n").splitlines() + lines[closing:]) + "\n"


def build(folder: Path, students: int = STUDENTS, seed: int = 0, course: Path = ROOT) -> set[frozenset[str]]:
    """The class in ``folder`` (a folder per student, holding puzzles/ made from the files of the
    course at ``course``: the tests give the course as committed); the copied pairs."""
    copied = {copier: (original, how) for original, copier, how in COPIES}
    for n in range(students):
        name = f"student{n:02d}"
        original, how = copied.get(name, (name, ""))
        for puzzle_id, file_name in PUZZLES.items():
            path = folder / name / "puzzles" / file_name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(puzzle_file(puzzle_id, kernel(puzzle_id, original, how, seed), course))
    return {frozenset((a, b)) for a, b, _ in COPIES}
