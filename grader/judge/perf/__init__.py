"""``--perf`` in the judge: an H100 time for a kernel, told without a GPU. The interpreter's counts
and the sm_90 compile's figures (run, with the reference's kept between runs in cache) become a
time by the fitted model (estimate, its coefficients in ``h100.json``), with what the learner
might try (findings); the renderers read the result (model)."""
