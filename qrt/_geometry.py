# SPDX-License-Identifier: Apache-2.0
"""Output-length formulas, written once (qrt.nn, qrt.functional, the op definitions and the CuPy
backend all use these)."""

from __future__ import annotations

__all__ = ["conv_out_len", "pool_out_len"]


def conv_out_len(L: int, k: int, stride: int, pad_l: int, pad_r: int, dilation: int) -> int:
    """torch's convolution output length: floor((L + pads - d*(k-1) - 1) / s) + 1."""
    return (L + pad_l + pad_r - dilation * (k - 1) - 1) // stride + 1


def pool_out_len(L: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """torch's pooling_output_shape (a ceil-mode window must start inside input + left pad)."""
    num = L + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    lo = num // s + 1
    if ceil_mode and (lo - 1) * s >= L + p:
        lo -= 1
    return lo
