# The `ctx` a `torch.autograd.Function`'s forward receives when `apply` runs it: torch.fx (and
# Dynamo when no input needs a gradient) trace the forward itself, so its tensor ops are the
# graph's, and what forward stores on `ctx` for backward is only remembered.


class FunctionCtx:
    def __init__(self):
        self.saved_tensors = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        pass

    def mark_non_differentiable(self, *args):
        pass

    def set_materialize_grads(self, value):
        self.materialize_grads = value
