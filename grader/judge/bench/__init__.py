"""``--bench`` in the judge: each size planned, run and judged (run), the tolerance of a size far
larger than any case's (tolerance), whether a timing can be trusted (integrity), and the result
the renderers read (model)."""
