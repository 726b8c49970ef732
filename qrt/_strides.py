# SPDX-License-Identifier: Apache-2.0
"""Shapes and strides: contiguity, views, reshape stride computation (torch's rules)."""

from __future__ import annotations

import math
import operator
from typing import Optional, Sequence, Tuple

import numpy as np


def _contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides = []
    acc = 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(int(d), 1)
    return tuple(reversed(strides))


def _as_shape(shape) -> Tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"shape {out} has a negative dimension")
    return out


def _wrap_dim(dim, ndim: int, what: str = "dim") -> int:
    """A dim in [-ndim, ndim) made non-negative; IndexError (as torch) when out of range."""
    try:
        d = operator.index(dim)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(dim).__name__}") from None
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"{what}={d} is out of range (expected to be in range of [{-n}, "
                         f"{n - 1}])")
    return d % n


def _shape_args(args, what: str = "shape") -> Tuple[int, ...]:
    """``f(2, 3)`` or ``f((2, 3))`` -> (2, 3)."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        args = args[0]
    try:
        return tuple(operator.index(d) for d in args)
    except TypeError:
        raise TypeError(f"{what} must be integers, got {args!r}") from None


def _infer_shape(shape: Tuple[int, ...], numel: int) -> Tuple[int, ...]:
    """torch's infer_size: at most one -1, no other negative size, same element count."""
    infer = None
    known = 1
    for i, d in enumerate(shape):
        if d == -1:
            if infer is not None:
                raise ValueError("only one dimension can be inferred (-1)")
            infer = i
        elif d < 0:
            raise ValueError(f"invalid shape dimension {d}")
        else:
            known *= d
    if infer is not None:
        if known == 0 or numel % known:
            raise ValueError(f"shape {list(shape)} is invalid for input of size {numel}")
        shape = shape[:infer] + (numel // known,) + shape[infer + 1:]
    elif known != numel:
        raise ValueError(f"shape {list(shape)} is invalid for input of size {numel}")
    return shape


def _compute_stride(oldshape, oldstride, newshape) -> Optional[Tuple[int, ...]]:
    """ATen's computeStride: strides for viewing (oldshape, oldstride) as newshape, or None
    when no view exists (then reshape copies)."""
    if not oldshape:
        return (1,) * len(newshape)
    numel = math.prod(oldshape)
    if numel == 0 and tuple(oldshape) == tuple(newshape):
        return tuple(oldstride)
    newstride = [0] * len(newshape)
    if numel == 0:
        for d in range(len(newshape) - 1, -1, -1):
            newstride[d] = 1 if d == len(newshape) - 1 else \
                max(newshape[d + 1], 1) * newstride[d + 1]
        return tuple(newstride)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def _is_contiguous(shape, strides) -> bool:
    """torch's compute_contiguous: size-1 dims may have any stride; empty is contiguous."""
    if any(d == 0 for d in shape):
        return True
    z = 1
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1:
            if s != z:
                return False
            z *= d
    return True


def _channels_last_like(shape, strides, order) -> bool:
    """c10's is_channels_last_strides_{2d_s4,3d_s5}."""
    mn = 0
    if strides[1] == 0:
        return False
    for d in order:
        if shape[d] == 0 or strides[d] < mn:
            return False
        if d == 0 and mn == strides[1]:
            return False
        mn = strides[d]
        if shape[d] > 1:
            mn *= shape[d]
    return True


def _clone_strides(shape, strides) -> Tuple[int, ...]:
    """Strides of torch's quantized clone() (memory_format=preserve -> suggest_memory_format)."""
    if len(shape) == 4 and _channels_last_like(shape, strides, (1, 3, 2, 0)):
        n, c, h, w = shape
        return (h * w * c, 1, w * c, c)
    if len(shape) == 5 and _channels_last_like(shape, strides, (1, 4, 3, 2, 0)):
        n, c, d, h, w = shape
        return (d * h * w * c, 1, h * w * c, w * c, c)
    return _contiguous_strides(shape)
