"""Judging, in the trusted process: planning each case's inputs, binding them to a kernel,
running it through the channel, comparing with the spec, and the results and messages that
come of it; one grading context (:mod:`.session`) for every front-end."""
