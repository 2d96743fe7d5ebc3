"""A puzzle's free constants, and each student's own value of them.

A puzzle declares a constant the course could have chosen otherwise (the number added, eps, the
ignore index) once, as a :class:`Variant`. Without a student every reader sees the default, so
the course is what it always was. With a batch's secret and a student's id, :func:`drawn` picks
that student's value of each constant: the same wherever it runs, unguessable without the
secret, and in general another student's. The student's statement states it, and their file
must hold it: a file pasted from another student carries the other value, and fails.

Importable without torch or triton, as :mod:`grader.course.puzzle` is.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

# A placeholder for a variant's text in a fragment of the statement (Variant.stated): {{EPS}}.
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
# What a release per student writes at the course's root: that student's values, never the secret.
VARIANT_FILE = "variant.json"


def shown(value) -> str:
    """A value as a statement and a message write it: ``10``, ``1e-05``, ``-100``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    return repr(value)


def tex(value: float) -> str:
    """A small number as a statement's LaTeX writes it: ``10^{-5}``, ``2 \\times 10^{-5}``."""
    mantissa, exponent = f"{value:e}".split("e")
    digit = float(mantissa)
    power = f"10^{{{int(exponent)}}}"
    return power if digit == 1 else f"{digit:g} \\times {power}"


@dataclass(frozen=True)
class Variant:
    """One free constant of a puzzle.

    * ``name`` is how the puzzle file reads it: the keyword-only parameter of the spec, a
      look-alike or ``prepare`` (``def spec(x, *, ADD)``), and the key of ``Puzzle.rebuild``'s argument.
    * ``stated`` are the fragments of the statement that say the value, its words marked
      ``{{ADD}}``: ``("Add the constant {{ADD}} to",)``. The statement is written as the default
      reads (the file a learner opens stays plain text; a student's release has it written for
      their value); each fragment, with those words, must be in it, and a student's statement
      says their words there instead.
    * ``choices`` are the values a student may get: each must keep the puzzle well-posed, and
      any two must tell apart in some case, so that a kernel written for one fails the other.
    * ``what`` names it in the learner's words: "the constant added", "eps".
    * ``code`` says where the learner's file writes it, where the course's stub holds it: a
      module constant (``"GROUP"``) or a parameter's default (``"layer_norm_fwd.eps"``). A
      release per student writes the student's value there, and grading says so when the
      learner's file holds another. None: the learner writes it in a body, from the statement.
    * ``text`` gives the statement's words for a value (``10^{-5}``); more placeholders derived
      from the value come from ``also`` (``{"RSTD": lambda eps: f"{eps ** -0.5:.1f}"}``).
    * ``shared_with`` names the puzzle whose draw this one takes: a puzzle built on another's
      kernel needs that kernel's constant (puzzle 34 calls puzzle 23's cross-entropy kernel).
    """

    name: str
    choices: tuple
    default: object
    what: str
    stated: tuple[str, ...] = ()
    code: str | None = None
    text: Callable[[object], str] = shown
    also: Mapping[str, Callable[[object], str]] | None = None
    shared_with: str | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"variant name {self.name!r} must be an identifier")
        if len(set(self.choices)) != len(self.choices) or len(self.choices) < 2:
            raise ValueError(f"variant {self.name}: choices must be two or more distinct values, not {self.choices!r}")
        if self.default not in self.choices:
            raise ValueError(f"variant {self.name}: the default {self.default!r} is not one of its choices")
        if self.code is not None and not re.fullmatch(r"\w+(\.\w+)?", self.code):
            raise ValueError(f"variant {self.name}: code must be CONSTANT or function.parameter, not {self.code!r}")

    def texts(self, value) -> dict[str, str]:
        """The statement's words for ``value``, by placeholder name."""
        return {self.name: self.text(value), **{k: f(value) for k, f in (self.also or {}).items()}}

    def said(self, value) -> str:
        """``eps = 1e-05``: the constant and a value, as a message names them."""
        return f"{self.what} = {shown(value)}"


# ---- a student's id: the one mapping to their folder and their draw ----------------------------

FALLBACK_FOLDER = "unnamed"


def folder_name(text: str) -> str:
    """One safe path component: word characters (any script's letters and digits), dots and
    dashes, every other character ``_``; in Unicode's composed form (NFC: a Mac writes ``ë`` as
    two characters); not hidden, not empty, not ``.``/``..``; short enough that a ``-2`` still
    fits on any file system."""
    cleaned = re.sub(r"[^\w.-]", "_", unicodedata.normalize("NFC", text))
    if not cleaned.strip("."):
        return FALLBACK_FOLDER
    if cleaned.startswith("."):
        cleaned = "_" + cleaned[1:]
    while len(cleaned.encode()) > 120:
        root, ext = os.path.splitext(cleaned)
        cleaned = (root[:-1] + ext) if root and len(ext) <= 10 else cleaned[:-1]
    return cleaned


def student_folder(student: str) -> str:
    """A student's folder, from their id: ``Zoë Ñúñez`` -> ``Zoë_Ñúñez``, ``O'Brien`` -> ``O_Brien``.
    ``release --roster`` writes it, ``batch`` names their row with it, and their draw is keyed by
    it (:func:`student_key`): a release's folder handed back as it was, or under the id itself,
    gets the same constants."""
    text = student.strip()
    if not text:
        raise ValueError("a student id must not be empty")
    return folder_name(text)


def student_key(student: str) -> str:
    """A student's id as the draw reads it: their folder's name, case-blind (a case-insensitive
    disk merges ``Bob`` and ``bob``): ``Alice ``, ``alice`` and ``ALICE`` are one student, and
    so are ``Zoë Ñúñez`` and ``Zoë_Ñúñez``."""
    return student_folder(student).casefold()


def draw_value(variant: Variant, puzzle_id: str, secret: int, student: str):
    """The student's value of ``variant``: HMAC-SHA256 keyed by the secret, of the puzzle (or the
    one it shares with), the constant and the student, reduced to one of the choices."""
    message = f"{variant.shared_with or puzzle_id}:{variant.name}:{student_key(student)}".encode()
    digest = hmac.new(str(secret).encode(), message, hashlib.sha256).digest()
    return variant.choices[int.from_bytes(digest[:8], "big") % len(variant.choices)]


def drawn(variants: tuple[Variant, ...], puzzle_id: str, secret: int, student: str) -> dict[str, object]:
    """Every variant's value for the student; the defaults without a secret."""
    if not secret:
        return {v.name: v.default for v in variants}
    return {v.name: draw_value(v, puzzle_id, secret, student) for v in variants}


def render(template: str, texts: Mapping[str, str], where: str) -> str:
    """``template`` with each ``{{NAME}}`` replaced; a name no variant gives is the course's bug."""
    unknown = sorted({m.group(1) for m in PLACEHOLDER.finditer(template)} - set(texts))
    if unknown:
        raise ValueError(f"{where}: a fragment names {', '.join(unknown)}, which its Variant's texts lack")
    return PLACEHOLDER.sub(lambda m: texts[m.group(1)], template)


def restate(text: str, variants: tuple[Variant, ...], values: Mapping[str, object], where: str) -> str:
    """``text``, a statement written for some choice of each variant (the default, in the course's
    own files; the student's, in their release), saying ``values`` instead: each variant's
    ``stated`` fragments, found with the words of the choice the text was written for, get the
    value's. A text that says no choice in every fragment is the course's bug: the statement
    changed and the variant did not."""
    for variant in variants:
        def said(value):
            return [render(fragment, variant.texts(value), where) for fragment in variant.stated]
        ordered = (variant.default, *(c for c in variant.choices if c != variant.default))
        written = next((c for c in ordered if all(words in text for words in said(c))), None)
        if written is None:
            missing = next(words for words in said(variant.default) if words not in text)
            raise ValueError(f"{where}: the statement does not say {missing!r} (a fragment of variant {variant.name})")
        for old, new in zip(said(written), said(values.get(variant.name, variant.default))):
            text = text.replace(old, new)
    return text


# ---- a student's values, as a release writes them for the learner's own copy ------------------

@dataclass(frozen=True)
class StudentVariant:
    """One student's values by puzzle: what ``variant.json`` holds (never the secret)."""

    student: str
    values: Mapping[str, Mapping[str, object]]

    def to_json(self) -> str:
        return json.dumps({"student": self.student, "puzzles": self.values}, indent=1, sort_keys=True) + "\n"

    @staticmethod
    def read(path: Path) -> "StudentVariant":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            puzzles = data["puzzles"]
            if not isinstance(data["student"], str) or not isinstance(puzzles, dict) or not all(
                    isinstance(v, dict) for v in puzzles.values()):
                raise TypeError("student must be a string and puzzles an object of objects")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path} is not a student's variant file ({type(exc).__name__}: {exc}); "
                             f"ask your instructor for it again, or delete it to grade with the course's defaults")
        return StudentVariant(data["student"], puzzles)
