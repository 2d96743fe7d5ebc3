"""The worker's side of a Helion puzzle: the kernel loaded as Helion's object (run), its host code
watched as it runs (host), its generated Triton run tile by tile in the interpreter (tiled, cpu),
the case's tile sizes as a Helion config (config), and its timing (bench)."""
