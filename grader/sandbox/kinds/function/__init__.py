"""The worker's side of an autograd puzzle: the learner's ``torch.autograd.Function`` recorded on
tensors without values (record), then replayed on the grader's inputs, operators and kernels only
(replay)."""
