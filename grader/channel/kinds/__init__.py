"""Each puzzle kind's own messages, beside the core's (:mod:`grader.channel.wire`): a module per
kind whose cases need requests of their own (its wing of messages, ``<kind>.py``), registering
them into the requests the worker reads. That kind's worker wing (``grader.sandbox.kinds.<kind>``)
imports it for the requests it answers, and the worker loads every kind's wing before it reads a
request, so that it reads every kind's requests."""
