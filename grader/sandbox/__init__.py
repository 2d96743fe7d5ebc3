"""What runs on the untrusted side: the worker process that imports learner code, launches its
kernels and wrappers, records their accesses and times them.

Nothing here decides a verdict. Replies carry raw bytes and facts (what was stored where,
which operators ran); the grader outside the sandbox compares them with the spec. A test holds
this package to that: nothing it imports, followed through the package, is of the judge
"""
