"""The ``--json`` document: exactly one JSON object for the whole run."""
from __future__ import annotations

import json

from grader.judge.results import Report, to_dict


def render(report: Report) -> str:
    s = report.summary
    doc = {
        "results": [to_dict(r) | {"passed": r.passed} for r in report.results],
        "summary": {"total": s.total, "passed": s.passed, "failed": s.failed,
                    "not_attempted": s.not_attempted, "unsupported": s.unsupported,
                    "interpreter_limit": s.interpreter_limit, "errors": s.errors},
        "seconds": report.seconds,
    }
    return json.dumps(doc, indent=2, default=str)
