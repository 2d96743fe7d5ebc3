"""The program-batched engine: every program of an interpreted launch run together, each operation
once for all of them, with the serial interpreter's results, bit for bit (docs/batched-engine.md)."""
