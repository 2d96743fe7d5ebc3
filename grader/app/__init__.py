"""The front-ends: the command line and its subcommands, the notebook, the triton-viz viewer.
Each parses what it is given and opens one grading context; none imports another, and nothing
below imports them."""
