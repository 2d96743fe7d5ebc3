"""Reading a learner's text: definitions only, the rules of what a definition may evaluate,
what a file is allowed to do (sniffing, wrapper checks, host helpers), a notebook's cells as a
module, and a class's folders. Nothing here runs a learner's code."""
