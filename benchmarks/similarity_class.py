"""A synthetic class of 40 for the similarity pass's two signals (issue 46): honest students who
each wrote puzzle 19's online softmax their own way, and copiers who took another's kernel and
hid it by one disguise, or by all of them at once. Measures recall on the copies and the false
pairs among honest students, for the compiled-kernel (TTIR) signal and the source signal.

    python benchmarks/similarity_class.py [--seeds 20] [--puzzle puzzle07] [--no-habits] [--verbose]

An honest student is tests/synthetic_class.py's: names, a program id kept or inline, masks named
or inline (either way round), row pointers built once or in every load, a loop over offsets or
over chunk numbers, a scalar or a per-lane running maximum, the update on one line or named
parts, the inverse or a division, the cast on the load or after, operand order. Each disguise is
applied alone to an honest student's kernel (:data:`DISGUISES`), and all together. Every kernel
is compiled here as the sandboxed worker compiles it (``compile_request._ttir``, sm_90, the
puzzle's first case's constexprs): the code is this file's own, never a learner's. ``--puzzle
puzzle07`` builds the long sum's class the same way. ``tl.static_range`` is not among the
disguises: both puzzles' ``T`` is a runtime length, which a static loop cannot run over
(tests/test_similarity_ir.py checks it on a kernel whose count is a constexpr).
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import synthetic_class  # noqa: E402

# puzzle: (its kernel, ASTSource's signature, the constexprs of the puzzle's first case)
SETUPS = {"puzzle19": ("online_softmax_kernel", {"x_ptr": "*fp32", "z_ptr": "*fp32", "N0": "i32", "T": "i32",
                                                 "B1": "constexpr"}, {"B1": 64}),
          "puzzle07": ("sum_kernel", {"x_ptr": "*fp32", "z_ptr": "*fp32", "N0": "i32", "N1": "i32", "T": "i32",
                                      "B0": "constexpr", "B1": "constexpr"}, {"B0": 1, "B1": 32})}
PUZZLE = "puzzle19"  # --puzzle puzzle07: the long sum, tests/synthetic_class.py's other looping puzzle
STUDENTS = 40
HABITS = True  # --no-habits: honest students differ only in tests/synthetic_class.py's choices


# ---- disguises: each keeps what the kernel computes ---------------------------------------------

def _kernel(tree: ast.Module) -> ast.FunctionDef:
    return next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == SETUPS[PUZZLE][0])


def _renamed(code: str) -> str:
    return synthetic_class.renamed(code)


def _helper(code: str) -> str:
    """The first load of every loop computed by an ``@triton.jit`` helper, its names its own."""
    tree = ast.parse(code)
    kernel = _kernel(tree)
    for number, loop in enumerate(n for n in ast.walk(kernel) if isinstance(n, ast.For)):
        index, stmt = next((i, s) for i, s in enumerate(loop.body) if isinstance(s, ast.Assign)
                           and "tl.load" in ast.unparse(s.value))
        args = [n for n in dict.fromkeys(x.id for x in ast.walk(stmt.value) if isinstance(x, ast.Name))
                if n not in ("tl", "float")]
        params = {name: f"a{i}" for i, name in enumerate(args)}
        body = synthetic_class._Renamer(params).visit(ast.parse(ast.unparse(stmt.value), mode="eval").body)
        name = f"{synthetic_class.HELPER}{number}"  # kept by the renaming, which renames calls only
        tree.body.insert(0, ast.parse(f"@triton.jit\ndef {name}({', '.join(params.values())}):\n"
                                      f"    got = {ast.unparse(body)}\n    return got\n").body[0])
        loop.body[index] = ast.parse(f"{ast.unparse(stmt.targets[0])} = {name}({', '.join(args)})").body[0]
    return ast.unparse(tree) + "\n"


def _dead(code: str) -> str:
    """Unused values before and in each loop, and a block that never runs."""
    tree = ast.parse(code)
    kernel = _kernel(tree)
    kernel.body[1:1] = ast.parse("spare = tl.arange(0, B1) * 2 + 1\nif False:\n    tl.device_print('row', spare)").body
    for loop in [n for n in ast.walk(kernel) if isinstance(n, ast.For)]:
        loop.body.insert(1, ast.parse("unused_step = B1 * 3 - 1").body[0])
    return ast.unparse(tree) + "\n"


def _tl_range(code: str) -> str:
    """``range`` as ``tl.range``."""
    tree = ast.parse(code)
    for loop in [n for n in ast.walk(tree) if isinstance(n, ast.For)]:
        loop.iter.func = ast.Attribute(ast.Name("tl", ast.Load()), "range", ast.Load())
    return ast.unparse(tree) + "\n"


def _chunk_count(code: str) -> str:
    """A loop's bound named where it was inline (``n_chunks = tl.cdiv(T, B1)``), inline where a
    step was named: the compiler folds both to one value."""
    tree = ast.parse(code)
    kernel = _kernel(tree)
    for loop in [n for n in ast.walk(kernel) if isinstance(n, ast.For)]:
        header = ast.unparse(loop.iter)
        if header == "range(tl.cdiv(T, B1))":
            loop.iter = ast.parse("range(n_chunks)", mode="eval").body
        elif header == "range(0, T, B1)":
            loop.iter = ast.parse("range(0, T, step)", mode="eval").body
    kernel.body[1:1] = ast.parse("n_chunks = tl.cdiv(T, B1)\nstep = B1").body
    return ast.unparse(tree) + "\n"


class _Whiles(ast.NodeTransformer):
    """``for v in range(a, b, c)`` as ``v = a`` / ``while v < b:`` ... ``v += c``."""

    def visit_For(self, node: ast.For):
        node = self.generic_visit(node)
        args = [ast.unparse(a) for a in node.iter.args]
        start, stop, step = (["0", args[0], "1"] if len(args) == 1 else args + ["1"] if len(args) == 2 else args)
        name = node.target.id
        loop = ast.parse(f"{name} = {start}\nwhile {name} < {stop}:\n    pass\n").body
        loop[1].body = node.body + ast.parse(f"{name} += {step}").body
        return loop


def _while(code: str) -> str:
    return ast.unparse(_Whiles().visit(ast.parse(code))) + "\n"


def _reordered(code: str) -> str:
    return code  # built reordered by the generator (its independent statements the other way round)


DISGUISES = {"renamed": _renamed, "helper": _helper, "dead code": _dead, "reordered": _reordered,
             "tl.range": _tl_range, "chunk count": _chunk_count, "for -> while": _while}
ALL = "all together"


def copy_of(original: str, how: str, seed: int) -> str:
    """The original student's kernel, disguised ``how`` (a key of :data:`DISGUISES`, or :data:`ALL`)."""
    reordered = how in ("reordered", ALL)
    code = honest(original, seed, reordered=reordered)
    if how == ALL:
        for step in ("chunk count", "tl.range", "helper", "dead code", "for -> while", "renamed"):
            code = DISGUISES[step](code)
        return code
    return DISGUISES[how](code)


class _Habits(ast.NodeTransformer):
    """What else an honest student's kernel differs in, and the compiler keeps: a 64-bit row
    offset, ``exp2`` for ``exp``, the statement's eviction hints (both, the first pass's, or
    none), and what the second pass's masked load fills in (``-inf`` again, ``0.0`` or nothing)."""

    def __init__(self, rng: random.Random) -> None:
        self.wide = rng.random() < 0.3
        self.exp2 = rng.random() < 0.3
        self.hints = rng.choices(("none", "both", "first"), (0.5, 0.35, 0.15))[0]
        self.refill = rng.choices(("same", "zero", "none"), (0.5, 0.25, 0.25))[0]
        self.loop = 0

    def visit_Assign(self, node):
        node = self.generic_visit(node)
        if self.wide and ast.unparse(node.value) == "tl.program_id(0)":
            node.value = ast.parse("tl.program_id(0).to(tl.int64)", mode="eval").body
        return node

    def visit_For(self, node):
        self.loop += 1
        return self.generic_visit(node)

    def visit_Call(self, node):
        node = self.generic_visit(node)
        name = ast.unparse(node.func)
        if name == "tl.exp" and self.exp2:
            return ast.parse(f"tl.exp2(({ast.unparse(node.args[0])}) * 1.4426950408889634)", mode="eval").body
        if name == "tl.load":
            policy = {("both", 1): "evict_last", ("both", 2): "evict_first", ("first", 1): "evict_last"}.get(
                (self.hints, self.loop))
            if policy:
                node.keywords.append(ast.keyword("eviction_policy", ast.Constant(policy)))
            if self.loop == 2 and self.refill != "same":
                node.keywords = [k for k in node.keywords if k.arg != "other"]
                if self.refill == "zero":
                    node.keywords.append(ast.keyword("other", ast.Constant(0.0)))
        return node


def honest(student: str, seed: int, reordered: bool = False) -> str:
    number = int(student[len("student"):])
    st = synthetic_class._Student(seed * 1_000_003 + number * 1000 + int(PUZZLE[-2:]))
    code = "\n".join(synthetic_class.MAKERS[PUZZLE](st, reordered=reordered)) + "\n"
    if not HABITS:
        return code
    return ast.unparse(_Habits(random.Random(f"{seed}/{student}")).visit(ast.parse(code))) + "\n"


def honest_of(pair: frozenset[str], codes: dict[str, str], seed: int) -> str:
    """The original of a copied pair: the one whose kernel is their own."""
    return next(name for name in sorted(pair) if codes[name] == honest(name, seed))


def build(seed: int, students: int = STUDENTS) -> tuple[dict[str, str], dict[frozenset[str], str]]:
    """The class: each student's kernel, and the copied pairs with their disguise. One copier per
    disguise, and one with all of them, each copying a different honest student."""
    rng = random.Random(seed)
    names = [f"student{n:02d}" for n in range(students)]
    hows = [*DISGUISES, ALL]
    chosen = rng.sample(names, 2 * len(hows))
    originals, copiers = chosen[:len(hows)], chosen[len(hows):]
    codes = {name: honest(name, seed) for name in names if name not in copiers}
    pairs = {}
    for original, copier, how in zip(originals, copiers, hows):
        codes[copier] = copy_of(original, how, seed)
        pairs[frozenset((original, copier))] = how
    return codes, pairs


# ---- compiled as the worker compiles -------------------------------------------------------------

def ttir(code: str, folder: Path) -> str:
    """The TTIR of ``code``'s kernel, compiled as the grader's worker does (its own function)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from grader.sandbox.compile_request import _ttir
    path = folder / f"k{abs(hash(code))}.py"
    path.write_text("import triton\nimport triton.language as tl\n\n\n" + code)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    name, signature, constexprs = SETUPS[PUZZLE]
    source = ASTSource(fn=getattr(module, name), signature=signature, constexprs=constexprs)
    return _ttir(triton, source, GPUTarget("cuda", 90, 32), {})


def main() -> None:
    from grader.course.loader import Course
    from grader.judge.similarity.find import COMPILED, IR_SCORE, SOURCE, class_pairs, ir_scores

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--verbose", action="store_true", help="print every flagged pair")
    parser.add_argument("--no-habits", action="store_true", help="honest students without _Habits' choices")
    parser.add_argument("--puzzle", choices=sorted(SETUPS), default="puzzle19")
    args = parser.parse_args()
    global HABITS, PUZZLE
    HABITS, PUZZLE = not args.no_habits, args.puzzle
    course = Course(ROOT)
    found = {"ir": {}, "source": {}, "either": {}}
    false_pairs = {"ir": 0, "source": 0, "either": 0}
    honest_pairs, compile_s, compare_s, source_s = 0, 0.0, 0.0, 0.0
    top_honest, low_copy = [], []  # compiled kernels' scores
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            codes, copied = build(seed)
            started = time.perf_counter()
            irs = {name: ttir(code, Path(tmp)) for name, code in codes.items()}
            compile_s += time.perf_counter() - started
            texts = {name: synthetic_class.puzzle_file(PUZZLE, code) for name, code in codes.items()}
            started = time.perf_counter()
            class_pairs(course, PUZZLE, texts, {})  # the pass as it was: the source alone
            source_s += time.perf_counter() - started
            started = time.perf_counter()
            pairs = class_pairs(course, PUZZLE, texts, irs)
            compare_s += time.perf_counter() - started
            flagged_ir = {frozenset(p.students) for p in pairs if COMPILED in p.signals}
            flagged_src = {frozenset(p.students) for p in pairs if SOURCE in p.signals}
            if args.verbose:
                for p in pairs:
                    print(seed, sorted(p.students), copied.get(frozenset(p.students), "HONEST"), p.signals,
                          p.score, p.compiled_score)
            copiers = {name for pair in copied for name in pair} - {honest_of(pair, codes, seed) for pair in copied}
            honest_names = [n for n in codes if n not in copiers]  # the originals wrote their own
            honest_pairs += len(honest_names) * (len(honest_names) - 1) // 2
            for pair, (_, score) in ir_scores(irs):
                if set(pair) <= set(honest_names):
                    top_honest.append((score, seed, pair))
                elif frozenset(pair) in copied:
                    low_copy.append((score, seed, copied[frozenset(pair)]))
            for signal, flagged in (("ir", flagged_ir), ("source", flagged_src), ("either", flagged_ir | flagged_src)):
                for pair, how in copied.items():
                    found[signal].setdefault(how, []).append(pair in flagged)
                false_pairs[signal] += sum(1 for pair in flagged if pair <= set(honest_names))
    print(f"{PUZZLE}: {args.seeds} classes of {STUDENTS}; {honest_pairs} honest pairs")
    print("| disguise | compiled kernel (TTIR) | source | either |")
    print("|---|---|---|---|")
    for how in [*DISGUISES, ALL]:
        cells = [f"{sum(found[s][how])} of {len(found[s][how])}" for s in ("ir", "source", "either")]
        print(f"| {how} | " + " | ".join(cells) + " |")
    total = {s: sum(sum(v) for v in found[s].values()) for s in found}
    count = sum(len(v) for v in found["ir"].values())
    print(f"| **recall, all copies** | {total['ir']} of {count} | {total['source']} of {count} | "
          f"{total['either']} of {count} |")
    print(f"| **false pairs among honest students** | {false_pairs['ir']} | {false_pairs['source']} | "
          f"{false_pairs['either']} |")
    top_honest.sort(reverse=True)
    print(f"compiled kernels (flagged at {IR_SCORE}): honest pairs' highest scores "
          + ", ".join(f"{score:.3f} (seed {seed})" for score, seed, _ in top_honest[:5])
          + "; copies' lowest "
          + ", ".join(f"{score:.3f} ({how}, seed {seed})" for score, seed, how in sorted(low_copy)[:3]))
    print(f"per class of {STUDENTS}, one thread: compiling to TTIR (in the workers, during grading) "
          f"{compile_s / args.seeds:.2f} s; the pass over the puzzle, source alone {source_s / args.seeds:.3f} s, "
          f"both signals {compare_s / args.seeds:.3f} s")


if __name__ == "__main__":
    main()
