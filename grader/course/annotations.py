"""Reads a spec's jaxtyping annotations: the one place that knows about jaxtyping.

Only jaxtyping's public API is used: ``AbstractArray`` subclasses and their documented
``dtypes`` and ``dim_str`` attributes.
"""
from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass
from typing import Callable, Mapping

import jaxtyping

from grader.course.dtypes import DTYPES


class AnnotationError(ValueError):
    """A spec whose annotations the grader cannot build inputs from (a course bug)."""


@dataclass(frozen=True)
class TensorSpec:
    """One annotated tensor: its argument name, dtype name and symbolic dims."""

    name: str
    dtype: str
    dims: tuple[str, ...]

    def shape(self, sizes: Mapping[str, int]) -> tuple[int, ...]:
        shape = []
        for dim in self.dims:
            if dim.isdigit():
                shape.append(int(dim))
            elif dim.startswith("*") and dim[1:] in sizes:  # variadic: the case gives a tuple
                shape.extend(int(s) for s in sizes[dim[1:]])
            elif dim in sizes:
                shape.append(int(sizes[dim]))
            else:
                known = ", ".join(sorted(sizes)) or "none"
                raise AnnotationError(f"{self.name}: dim {dim.lstrip('*')!r} has no size in this case (sizes: {known})")
        return tuple(shape)

    def describe(self) -> str:
        kind = self.dtype.replace("float", "Float").replace("int", "Int").replace("uInt", "UInt")
        return f'{self.name}: {kind}[Tensor, "{" ".join(self.dims)}"]'


def _tensor_spec(name: str, hint) -> TensorSpec:
    if not (isinstance(hint, type) and issubclass(hint, jaxtyping.AbstractArray)):
        raise AnnotationError(f"{name}: annotate it like Float32[Tensor, \"N0\"], not {hint!r}")
    if len(hint.dtypes) != 1 or hint.dtypes[0] not in DTYPES:
        raise AnnotationError(
            f"{name}: use exactly one concrete dtype such as Float32 or Int32 (got {hint.dtypes})"
        )
    dims = tuple(hint.dim_str.split())
    for dim in dims:
        if not (dim.isdigit() or dim.isidentifier() or (dim.startswith("*") and dim[1:].isidentifier())):
            raise AnnotationError(f"{name}: dim {dim!r} must be a name such as N0, a number, or *batch")
    return TensorSpec(name=name, dtype=hint.dtypes[0], dims=dims)


def read_spec(spec: Callable, output_names) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
    """The spec's inputs in order, and its outputs under ``output_names`` (one name or several)."""
    names = (output_names,) if isinstance(output_names, str) else tuple(output_names)
    hints = typing.get_type_hints(spec)
    params = inspect.signature(spec).parameters
    inputs = tuple(_tensor_spec(name, hints.get(name)) for name, p in params.items() if p.kind is not p.KEYWORD_ONLY)
    if "return" not in hints:
        raise AnnotationError(f"{spec.__name__}: annotate the return value with its dtype and shape")
    returned = hints["return"]
    parts = typing.get_args(returned) if typing.get_origin(returned) is tuple else (returned,)
    if len(parts) != len(names):
        raise AnnotationError(f"{spec.__name__} returns {len(parts)} tensor(s) but the puzzle names "
                              f"{len(names)} output(s): {', '.join(names)}")
    return inputs, tuple(_tensor_spec(name, hint) for name, hint in zip(names, parts))
