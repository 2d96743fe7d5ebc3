"""Release numbers of the installed stack, compared by the doctor and by the triton-viz viewer."""
from __future__ import annotations

import re


def release(text: str) -> tuple[int, ...]:
    """'2.13.0+cpu' -> (2, 13, 0), '3.2.0rc1' -> (3, 2, 0): enough to compare releases."""
    numbers = []
    for piece in text.split("+")[0].split("."):
        digits = re.match(r"\d+", piece)
        if digits is None:
            break
        numbers.append(int(digits.group()))
        if digits.end() < len(piece):
            break  # a pre-release suffix ends the release number
    return tuple(numbers)
