"""Each puzzle kind's own messages, beside the core's (:mod:`grader.channel.wire`): a module per
kind whose cases need requests of their own, registering them into the requests the worker
reads. The worker's registry of kinds (:mod:`grader.sandbox.kinds`) imports each, so that a
worker reads every kind's requests."""
