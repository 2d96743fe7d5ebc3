"""``--bench`` in the worker: a kernel or a Function timed at the puzzle's headline size (run), by
one timing loop (loop), with the guards that keep a timed kernel honest (guard)."""
