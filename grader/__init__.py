"""Triton Puzzles' grader: runs a learner's kernel on generated cases and compares with the spec.

Kept free of heavy imports: ``python -m grader.sandbox.worker`` imports this package before it sets
``TRITON_INTERPRET``.
"""
__version__ = "0.1.0"
