# A learner's own helper module for puzzle35_subclass_adds: a tensor subclass built with `type()`,
# whose `__torch_dispatch__` turns a view of `x` into `x + y`. The host code only takes a view.
import torch


def adding(x, y):
    def dispatch(cls, func, types, args=(), kwargs=None):
        return torch.add(args[0].plain, args[0].other)

    def new(cls, plain, other):
        made = torch.Tensor._make_wrapper_subclass(cls, plain.shape, dtype=plain.dtype, device=plain.device)
        made.plain, made.other = plain, other
        return made

    kind = type("Adding", (torch.Tensor,), {"__new__": new, "__torch_dispatch__": classmethod(dispatch)})
    return kind(x, y)
