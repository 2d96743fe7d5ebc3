"""The grader's side of the boundary to the sandbox: the jail a worker runs in
(:mod:`.isolation`), the workers and their zygotes (:mod:`.worker_pool`), and the typed messages
both sides speak (:mod:`.wire` over :mod:`.protocol`). Nothing here reaches a verdict."""
