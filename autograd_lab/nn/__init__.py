"""Layers and models built from the explicit operators: Module, Linear, MLP, RNN and LSTM, activations, losses,
initialisations.

Example::

    from autograd_lab.nn import MLP, cross_entropy
    model = MLP([784, 128, 10], rng=0)
    loss = cross_entropy(model(x), y)
"""

from autograd_lab.nn.activation import ACTIVATIONS, LeakyReLU, ReLU, Sigmoid, Tanh
from autograd_lab.nn.init import INITS, he_normal, small_normal, xavier_uniform
from autograd_lab.nn.linear import Linear
from autograd_lab.nn.losses import cross_entropy, mse_loss
from autograd_lab.nn.mlp import MLP
from autograd_lab.nn.module import ModelFileError, Module, read_header
from autograd_lab.nn.recurrent import LSTM, RNN, LSTMCell, RNNCell
from autograd_lab.nn.regularization import Dropout, LayerNorm
from autograd_lab.nn.sequence import SequenceClassifier

__all__ = [
    "ACTIVATIONS",
    "INITS",
    "LSTM",
    "MLP",
    "RNN",
    "Dropout",
    "LSTMCell",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "ModelFileError",
    "Module",
    "RNNCell",
    "ReLU",
    "SequenceClassifier",
    "Sigmoid",
    "Tanh",
    "cross_entropy",
    "he_normal",
    "mse_loss",
    "read_header",
    "small_normal",
    "xavier_uniform",
]
