"""Triton's interpreter made to compute what an sm_90 GPU computes (semantics, rules, libdevice,
filling), to say what it cannot run (limits), to run without repeated set-up (speed), to share one
way of hooking it (hooks), and to prove itself on this machine (probe).
docs/interpreter-vs-gpu.md lists each difference."""
