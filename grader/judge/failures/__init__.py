"""The catalogue of failures: for each :class:`FailureKind`, the facts a check finds, the label
every report prints for it, and the message a learner reads, worded from those facts.

A check (``grader.judge.compare``, ``grader.judge.grade``, ``grader.judge.kinds.function.program``, ...) says
what it found as a frozen dataclass of facts; :func:`word` turns the facts into the message
through their kind's :class:`Entry` in :data:`CATALOGUE`. The kinds and their labels are in
:mod:`.catalogue`; the facts and their words are in one module per family (:mod:`.values`,
:mod:`.memory`, :mod:`.races`, :mod:`.compile`, :mod:`.runs`, :mod:`.file`, :mod:`.wrappers`,
:mod:`.bench`), each registering its words; a puzzle kind's own family is in its wing
(``grader/judge/kinds/<kind>/failures.py``), imported by what finds those failures. A new failure
is its facts and words in its family's module, plus the check that finds it: reporters read
labels from here.

Pure data and wording: the standard library and the grader's dtype vocabulary only, no torch,
so that the sandbox side may word failures too. This module is the face: what a check or a
report uses is imported from here.
"""
from __future__ import annotations

from grader.judge.failures.bench import (  # noqa: F401
    BelowLimit,
    HiddenWork,
    NotPlain,
    PersistingL2,
    Reached,
    Tampered,
    ThreadsStarted,
    TimedCall,
    Unfinished,
)
from grader.judge.failures.catalogue import (  # noqa: F401
    CATALOGUE,
    UNKINDED,
    VALUE_KINDS,
    Entry,
    FailureKind,
    StrEnum,
    Worded,
    label,
    points,
    register,
    reported,
    stops,
    word,
)
from grader.judge.failures.compile import (  # noqa: F401
    CheckUnfinished,
    CompileCheck,
    CompileFailed,
    LaunchCompile,
    dtype_fix,
)
from grader.judge.failures.file import (  # noqa: F401
    Dropped,
    NoKernel,
    NotCallable,
)
from grader.judge.failures.memory import (  # noqa: F401
    FOUND_BESIDE,
    RAISED_BESIDE,
    InputModified,
    StrayStore,
)
from grader.judge.failures.races import (  # noqa: F401
    OrderDependent,
    Overlap,
    ReadAcross,
)
from grader.judge.failures.runs import (  # noqa: F401
    BesideUnchecked,
    Crash,
    ImportFailed,
    InterpreterLimit,
    LaunchRefused,
    Raised,
    ReplayDisagrees,
    Skipped,
    SlowHere,
    Timeout,
)
from grader.judge.failures.values import (  # noqa: F401
    Element,
    FillChanged,
    GapFill,
    LargeInputs,
    LooksLike,
    Mismatch,
    Nonfinite,
    PropertyFailed,
    ReadEarly,
    Unwritten,
    finding,
)
from grader.judge.failures.words import (  # noqa: F401
    LOOKS_LIKE,
    READ_EARLY,
    at_line,
    fmt_index,
    fmt_shape,
    fmt_value,
    index_of,
    look_alike_note,
    plural,
    usual_fix,
)
from grader.judge.failures.wrappers import (  # noqa: F401
    CtxAttribute,
    GradCount,
    GradNotTensor,
    GradShape,
    HostReduction,
    HostValues,
    NeverComputed,
    NoLaunch,
    NotATensor,
    NotReplayable,
    ReturnsInput,
    SavedExtra,
    SavedStorage,
    TorchOp,
    Unseen,
    WrongOutput,
)
