"""Data for training: MNIST and Fashion-MNIST loaders, an IDX reader/writer, and mini-batches.

Typical use::

    from autograd_lab.data import load_dataset, DataLoader

    data = load_dataset("mnist", log=print)    # tries data_dir, cache, download, then the bundled subset
    print(data.describe())                     # which source was used
    for xb, yb in DataLoader(data.x_train, data.y_train, batch_size=64, seed=0):
        ...

Environment variables: ``AUTOGRAD_LAB_DATA`` moves the download cache (default ``~/.cache/autograd-lab``);
``AUTOGRAD_LAB_OFFLINE=1`` turns downloading off.
"""

from autograd_lab.data.batching import DataLoader, iterate_minibatches
from autograd_lab.data.bundled import TRAIN_COUNT
from autograd_lab.data.catalog import CACHE_ENV, OFFLINE_ENV, SPECS, cache_root
from autograd_lab.data.datasets import SOURCES, Dataset, load_bundled_mnist, load_dataset
from autograd_lab.data.errors import DataError
from autograd_lab.data.idx import read_idx, write_idx

__all__ = [
    "CACHE_ENV",
    "OFFLINE_ENV",
    "SOURCES",
    "SPECS",
    "TRAIN_COUNT",
    "DataError",
    "DataLoader",
    "Dataset",
    "cache_root",
    "iterate_minibatches",
    "load_bundled_mnist",
    "load_dataset",
    "read_idx",
    "write_idx",
]
