# SPDX-License-Identifier: Apache-2.0
"""``qrt.load``: read a blob (qrt._format.reader) and build the model (qrt.model).

The format itself (reader and writer) lives in :mod:`qrt._format`; this module only wires
the public entry point. Imports go one way: loader -> model -> executor -> ops -> _format.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Union, overload

from qrt._format.reader import Blob, FormatError, OpEntry, TensorEntry, read_blob, verify_blob
from qrt.model import Model

if TYPE_CHECKING:
    from typing import Literal

    from qrt.backends.cupy_backend import DeviceModel

__all__ = ["FormatError", "load", "read_blob", "verify_blob", "Blob", "TensorEntry", "OpEntry"]


@overload
def load(path: Union[str, os.PathLike], *, verify: bool = ..., device: Literal["cpu"] = ...,
         mmap: bool = ...) -> Model: ...


@overload
def load(path: Union[str, os.PathLike], *, verify: bool = ..., device: str,
         mmap: bool = ...) -> Union[Model, DeviceModel]: ...


def load(path: Union[str, os.PathLike], *, verify: bool = True, device: str = "cpu",
         mmap: bool = True) -> Union[Model, DeviceModel]:
    """Load a qrt ``.bin`` model.

    Parameters
    ----------
    path : str or os.PathLike
        A blob written by ``qrt-export``.
    verify : bool
        Check the payload (weights) checksum too. The header/table checksum and every
        structural rule are always checked.
    device : str
        ``"cpu"`` (default) or ``"cuda"`` / ``"cuda:N"``: run on an NVIDIA GPU through the
        CuPy backend (docs/gpu.md); raises ``qrt.backends.BackendUnavailable`` without CuPy or
        a GPU, and ``UnsupportedOnDevice`` for ops without a GPU kernel.
    mmap : bool
        True (default): weights are zero-copy views of a read-only mapping of the file. The
        process must then not see the file truncated or written in place (SIGBUS, or weights
        changing under it; ``Model.verify()`` detects the latter). False: read the file into
        memory once; nothing done to the file afterwards can reach the model.

    Returns
    -------
    qrt.Model
        Callable: ``model(x)``.

    Raises
    ------
    qrt.FormatError
        The file is not a valid blob (the message says what and where).
    """
    if device != "cpu":  # the GPU backend (qrt/backends); cupy is imported only here
        from qrt import backends
        return backends.load(path, device=device, verify=verify, mmap=mmap)
    return Model(read_blob(path, verify=verify, mmap=mmap))
