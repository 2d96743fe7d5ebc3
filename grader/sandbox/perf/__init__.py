"""``--perf`` in the worker: one interpreter run of the learner's code at one size (run), each
launch's programs sampled (sample) and their accesses counted (record) in 32-byte sectors
(sectors). The model that turns the counts into an H100 time is the judge's."""
