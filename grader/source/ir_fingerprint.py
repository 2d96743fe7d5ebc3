"""Fingerprints of what Triton's compiler made of a kernel: its TTIR, after inlining,
canonicalisation, CSE and dead-code elimination, at one case's constexprs (compiled in the
sandboxed worker, :mod:`grader.sandbox.compile_request`; here only its text is read).

The compiler has already made one program of most disguises (renames, helpers, dead code, a
chunk count named or inlined, ``range`` or ``tl.range``). What it leaves, this takes away:

* **order**: an op is known by what it computes, never by where it sits. Each op gets a label
  from its name, its normalised type and a few attributes that change what it computes (a
  comparison's predicate, a reduction's axis and combining ops), then the labels of its operands
  are folded in, :data:`DEPTH` times (Weisfeiler-Lehman relabelling). The fingerprint is the
  *set* of labels, so statements reordered, and a loop unrolled by ``tl.static_range`` (the same
  ops again), read alike;
* **names**: SSA names and the function's name never enter a label; a parameter reads as its
  type, a loop-carried value (``for``'s induction variable, ``while``'s counter, an
  accumulator) as ``carried`` and its type, so ``for`` and ``while`` loops differ only in the
  counter's compare and add;
* **sizes**: integer constants and tensor shapes lose their values (a case's sizes and blocks,
  or a student's own block choice); float constants keep theirs (``-inf`` and ``0.0`` differ);

Operand order (``a + b`` or ``b + a``, ``a < b`` or ``b > a``) is left as the learner wrote it
(the compiler keeps it): it is one of the few things honest students' kernels differ in once
compiled, and no disguise the pass is asked to see through changes it.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

DEPTH = 3  # rounds of relabelling: an op's label sees three ops up its data flow
STRUCTURE = frozenset({"scf.yield", "scf.condition", "tt.reduce.return", "tt.scan.return", "tt.return",
                       "tt.func", "module"})
LOOPS = frozenset({"scf.for", "scf.while"})
MAX_OPS = 20_000  # of one kernel: far past any puzzle's

_VALUE = re.compile(r"%[\w.$-]+(?:#\d+)?")
_RESULTS = re.compile(r"^\s*((?:%[\w.$-]+(?::\d+)?\s*,\s*)*%[\w.$-]+(?::\d+)?)\s*=\s*")
_OPNAME = re.compile(r'^"?([a-z_]+(?:\.[a-z_0-9]+)+)"?')
_ARG = re.compile(r"(%[\w.$-]+)\s*:\s*((?:[^,()<>]|<[^<>]*(?:<[^<>]*>[^<>]*)*>)+)")
_ITER = re.compile(r"(%[\w.$-]+)\s*=\s*%[\w.$-]+(?:#\d+)?")  # a loop's iter_args: carried = initial
_DIMS = re.compile(r"\b\d+x")


@dataclass(frozen=True)
class IrPrints:
    """A kernel's compiled form as a set of labels (stable hashes), and how many ops it has."""
    labels: frozenset[int]
    ops: int


def _type(text: str) -> str:
    return _DIMS.sub("?x", text.strip())


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


@dataclass(frozen=True)
class _Op:
    base: str            # what the op is alone: name, attributes that change what it computes, type
    operands: list[str]  # the definitions it reads, by key


def _base(name: str, rest: str, results_type: str) -> tuple[str, list[str]]:
    """An op's own label (name, predicate, a float constant's value, its normalised result type)
    and its operands."""
    body, _, types = rest.partition(" : ")
    operands = _VALUE.findall(body)
    words = [name]
    if name in ("arith.cmpi", "arith.cmpf"):
        words.append(body.split(",")[0].split()[-1])
    elif name == "arith.constant":
        value = body.split("arith.constant", 1)[-1].strip()
        words.append("int" if re.fullmatch(r"(?:dense<)?-?\d+>?", value) else value)
    elif name == "tt.get_program_id":
        words.append(body.split()[-1])
    elif "axis" in rest:
        words.append(m.group() if (m := re.search(r"axis = \d+", rest)) else "")
    words.append(_type(results_type or types.split("->")[-1]))
    return " ".join(words), operands


def parse_ttir(text: str) -> dict[str, _Op]:
    """Every value the kernel defines (by SSA name and place) with the op that made it: its label's
    parts."""
    ops: dict[str, _Op] = {}
    current: dict[str, str] = {}  # SSA name -> its latest definition (sibling regions reuse names)

    def define(name: str, base: str, operands: list[str]) -> None:
        key = f"{name}@{len(ops)}"
        ops[key] = _Op(base, [current.get(o, o) for o in operands])
        current[name] = key

    regions: list[list[str]] = []  # the combining ops of each open reduce / scan region
    pending: list[tuple[list[str], str, list[str]]] = []  # its results and operands, labelled when it closes
    for line in text.splitlines()[:MAX_OPS]:
        stripped = line.strip()
        if stripped.startswith("tt.func"):
            for name, kind in _ARG.findall(stripped.split("(", 1)[1].rsplit(")", 1)[0]):
                define(name, f"param {_type(kind)}", [])
            continue
        if stripped.startswith("^bb"):
            for name, kind in _ARG.findall(stripped):
                define(name, f"carried {_type(kind)}" if not regions else f"combined {_type(kind)}", [])
            continue
        if stripped.startswith("})") and pending:  # a reduce or scan closes: its label holds its combining ops
            results, name, operands = pending.pop()
            inner = " ".join(sorted(regions.pop()))
            for index, result in enumerate(results):
                define(result, f"{name} [{inner}] #{index}", operands)
            continue
        match = _RESULTS.match(line)
        results: list[str] = []
        rest = stripped
        if match:
            for part in match.group(1).split(","):
                part = part.strip()
                name, _, count = part.partition(":")
                results += [f"{name}#{i}" for i in range(int(count))] if count else [name]
            rest = line[match.end():].strip()
        found = _OPNAME.match(rest)
        if not found:
            continue
        name = found.group(1)
        if regions and not rest.endswith("({") and name not in STRUCTURE:
            regions[-1].append(name)
        if rest.endswith("({"):  # a region of combining ops follows
            regions.append([])
            pending.append((results, name + (m.group() if (m := re.search(r"axis = \d+", rest)) else ""),
                            _VALUE.findall(rest.split("(", 1)[1].split(")", 1)[0])))
            continue
        if name in LOOPS:
            types = rest.rsplit("->", 1)[-1] if "->" in rest else ""
            kinds = [_type(t) for t in re.findall(r"tensor<[^>]*>+|[if]\d+|!tt\.ptr<[^>]*>", types)]
            for index, carried in enumerate(_ITER.findall(rest.split("iter_args", 1)[-1])):
                define(carried, f"carried {kinds[index] if index < len(kinds) else ''}", [])
            bounds = re.search(r"scf\.for (%[\w.$-]+) = (\S+) to (\S+) step (\S+)", rest)
            if bounds:  # the induction variable, and the compare and step a while loop writes out
                counter, _start, stop, step = bounds.groups()
                define(counter, "carried i32", [])
                define(f"{counter}<", "arith.cmpi slt i32", [counter, stop])
                define(f"{counter}+", "arith.addi i32", [counter, step])
            for index, result in enumerate(results):
                define(result, f"loop result {kinds[index] if index < len(kinds) else ''}", [])
            continue
        if name in STRUCTURE or not results:
            if name not in STRUCTURE:  # a store, an atomic without a result: an op all the same
                base, operands = _base(name, rest, "")
                define(f"effect{len(ops)}", base, operands)
            continue
        if name == "scf.if":
            for index, result in enumerate(results):
                define(result, "if result", [])
            continue
        base, operands = _base(name, rest, rest.rsplit(" : ", 1)[-1].split("->")[-1] if " : " in rest else "")
        for index, result in enumerate(results):
            define(result, base + (f" #{index}" if len(results) > 1 else ""), operands)
    return ops


def ir_prints(ttir: str, depth: int = DEPTH) -> IrPrints:
    """The labels of every op of ``ttir`` after ``depth`` rounds of relabelling, each round's
    labels kept (what an op is alone, and with its operands one, two, three ops up)."""
    ops = parse_ttir(ttir)
    used = {o for op in ops.values() for o in op.operands}
    # a value nothing reads and that reads nothing (a while loop's counter, left over) is no op
    ops = {name: op for name, op in ops.items() if op.operands or name in used or name.startswith("effect")}
    labels = {name: op.base for name, op in ops.items()}
    kept = set(labels.values())
    for _ in range(depth):
        nxt = {}
        for name, op in ops.items():
            inputs = [labels.get(o, "?") for o in op.operands]
            nxt[name] = f"{op.base}({', '.join(inputs)})" if inputs else op.base
            if len(nxt[name]) > 200:  # a label grows with each round: hashed, it stays one word
                nxt[name] = f"{op.base}<{_hash(nxt[name]):x}>"
        labels = nxt
        kept |= set(labels.values())
    return IrPrints(frozenset(_hash(label) for label in kept), len(ops))
