"""Optimizers that update Parameters in place: SGD (momentum, Nesterov, weight decay, per-parameter clipping), Adam,
AdamW (decoupled weight decay), and clipping by the global gradient norm.

Example::

    opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt.zero_grad(); Engine.backward(loss, inputs=opt.params); opt.step()
"""

from autograd_lab.optim.adam import Adam
from autograd_lab.optim.adamw import AdamW
from autograd_lab.optim.clip import clip_grad_norm, clip_norm_
from autograd_lab.optim.optimizer import Optimizer
from autograd_lab.optim.sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "clip_grad_norm", "clip_norm_"]
