"""Layers and models built from the explicit operators: Module, Linear, MLP, Conv2d, pooling, batch norm, Sequential,
CNN, RNN and LSTM, activations, losses, initialisations.

Example::

    from autograd_lab.nn import MLP, cross_entropy
    model = MLP([784, 128, 10], rng=0)
    loss = cross_entropy(model(x), y)
"""

from autograd_lab.nn.activation import ACTIVATIONS, LeakyReLU, ReLU, Sigmoid, Tanh
from autograd_lab.nn.attention import MultiheadAttention, causal_mask, scaled_dot_product_attention
from autograd_lab.nn.batchnorm import BatchNorm1d, BatchNorm2d
from autograd_lab.nn.cnn import CNN
from autograd_lab.nn.container import Sequential
from autograd_lab.nn.conv import Conv2d
from autograd_lab.nn.init import INITS, he_normal, small_normal, xavier_uniform
from autograd_lab.nn.linear import Linear
from autograd_lab.nn.losses import cross_entropy, mse_loss
from autograd_lab.nn.mlp import MLP
from autograd_lab.nn.module import ModelFileError, Module, read_header
from autograd_lab.nn.pooling import AvgPool2d, Flatten, MaxPool2d
from autograd_lab.nn.recurrent import LSTM, RNN, LSTMCell, RNNCell
from autograd_lab.nn.regularization import Dropout, LayerNorm
from autograd_lab.nn.sequence import SequenceClassifier
from autograd_lab.nn.transformer import Embedding, PositionalEmbedding, TransformerEncoderLayer, VisionTransformer

__all__ = [
    "ACTIVATIONS",
    "CNN",
    "INITS",
    "LSTM",
    "MLP",
    "RNN",
    "AvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv2d",
    "Dropout",
    "Embedding",
    "Flatten",
    "LSTMCell",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "MaxPool2d",
    "ModelFileError",
    "Module",
    "MultiheadAttention",
    "PositionalEmbedding",
    "RNNCell",
    "ReLU",
    "SequenceClassifier",
    "Sequential",
    "Sigmoid",
    "Tanh",
    "TransformerEncoderLayer",
    "VisionTransformer",
    "causal_mask",
    "cross_entropy",
    "he_normal",
    "mse_loss",
    "read_header",
    "scaled_dot_product_attention",
    "small_normal",
    "xavier_uniform",
]
