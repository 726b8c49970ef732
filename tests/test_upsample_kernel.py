# SPDX-License-Identifier: Apache-2.0
"""The bilinear upsample C kernel (include/qrt/upsample.h) against its numpy specification
(qrt.ops.upsample.bilinear_numpy, itself equal to torch in tests/test_vision2.py): every
variant bit-exact on random sizes (up and down, 1x1, odd), both of torch's kernel forms, the
vector/tail channel split, uint8 / int8 / float32; and its argument checks.  No torch needed."""

import numpy as np
import pytest

from qrt import _ops
from qrt.ops.upsample import _RANGE, bilinear_numpy, linear_taps

_F32 = np.float32
VARIANTS = [0, -1]   # QRT_ISA_REF, best available


def _case(rng, dtype, n, c, h, w, oh, ow, ac, fused, nv):
    if dtype == "float32":
        x = (rng.standard_normal((n, c, h, w)) * 10).astype(_F32)
        zp, lo, hi = 0.0, 0, 0
    else:
        lo, hi = _RANGE[dtype]
        x = rng.integers(lo, hi + 1, (n, c, h, w)).astype(np.uint8 if dtype == "quint8"
                                                          else np.int8)
        zp = float(rng.integers(lo, hi + 1))
    sh = _F32(_F32(h - 1) / _F32(oh - 1)) if ac and oh > 1 else _F32(_F32(h) / _F32(oh))
    sw = _F32(_F32(w - 1) / _F32(ow - 1)) if ac and ow > 1 else _F32(_F32(w) / _F32(ow))
    if ac and oh == 1:
        sh = _F32(0)
    if ac and ow == 1:
        sw = _F32(0)
    th = linear_taps(sh, h, oh, ac, fused)
    tw = linear_taps(sw, w, ow, ac, fused)
    return x, th, tw, zp, lo, hi


def _run(x, th, tw, fused, nv, zp, lo, hi, oh, ow, variant):
    n, c, h, w = x.shape
    y = np.full((n, c, oh, ow), 77, x.dtype)
    taps = [np.ascontiguousarray(t, np.int32 if k < 2 else _F32)
            for tt in (th, tw) for k, t in enumerate(tt)]
    dt = {np.dtype(np.uint8): 0, np.dtype(np.int8): 1, np.dtype(_F32): 2}[x.dtype]
    _ops.upsample_bilinear(x.reshape(-1).view(np.uint8), y.reshape(-1).view(np.uint8), dt,
                           n * c, c, h, w, oh, ow, *taps, np.empty(2 * ow, _F32),
                           fused=fused, nv=nv, zp=zp, lo=lo, hi=hi, variant=variant)
    return y


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", ["quint8", "qint8", "float32"])
def test_kernel_equals_numpy_spec(rng, variant, dtype):
    for k in range(40):
        n, c = int(rng.integers(1, 3)), int(rng.integers(1, 20))
        h, w = int(rng.integers(1, 12)), int(rng.integers(1, 12))
        oh = int(rng.integers(1, 3 * h + 2))
        ow = int(rng.integers(1, 3 * w + 2))
        ac = bool(rng.integers(2))
        fused = dtype != "float32" and bool(rng.integers(2))
        nv = 8 * (c // 8) if fused else 0
        x, th, tw, zp, lo, hi = _case(rng, dtype, n, c, h, w, oh, ow, ac, fused, nv)
        want = bilinear_numpy(x, th, tw, fused, nv, zp, lo, hi)
        got = _run(x, th, tw, fused, nv, zp, lo, hi, oh, ow, variant)
        if dtype == "float32":
            assert np.array_equal(got.view(np.int32), want.astype(_F32).view(np.int32)), k
        else:
            assert np.array_equal(got.astype(np.int64), want.astype(np.int64)), k


def test_kernel_unet_shape_variants_agree(rng):
    """A U-Net decoder's 2x upsample (64 channels, 32x32 -> 64x64): ref == best variant, both
    forms (the tail of 8 * (C // 8) empty here, and with 67 channels not)."""
    for c, fused in ((64, True), (67, True), (64, False)):
        x, th, tw, zp, lo, hi = _case(rng, "quint8", 1, c, 32, 32, 64, 64, False, fused, 0)
        nv = 8 * (c // 8) if fused else 0
        a = _run(x, th, tw, fused, nv, zp, lo, hi, 64, 64, 0)
        b = _run(x, th, tw, fused, nv, zp, lo, hi, 64, 64, -1)
        assert np.array_equal(a, b)
        assert np.array_equal(a.astype(np.int64),
                              bilinear_numpy(x, th, tw, fused, nv, zp, lo, hi).astype(np.int64))


def test_kernel_refuses_bad_arguments(rng):
    x, th, tw, zp, lo, hi = _case(rng, "quint8", 1, 3, 4, 5, 8, 10, False, False, 0)
    taps = [np.ascontiguousarray(t, np.int32 if k < 2 else _F32)
            for tt in (th, tw) for k, t in enumerate(tt)]
    xb = x.reshape(-1).view(np.uint8)
    y = np.empty(3 * 8 * 10, np.uint8)
    work = np.empty(20, _F32)

    def call(**over):
        a = dict(x=xb, y=y, dtype=0, planes=3, c=3, h=4, w=5, oh=8, ow=10, taps=taps, work=work)
        a.update(over)
        return _ops.upsample_bilinear(a["x"], a["y"], a["dtype"], a["planes"], a["c"], a["h"],
                                      a["w"], a["oh"], a["ow"], *a["taps"], a["work"])
    call()
    with pytest.raises(ValueError, match="bytes"):
        call(y=np.empty(3 * 8 * 10 - 1, np.uint8))
    with pytest.raises(ValueError, match="bytes"):
        call(dtype=2)
    with pytest.raises(ValueError, match="work"):
        call(work=np.empty(19, _F32))
    with pytest.raises(ValueError, match="dtype"):
        call(dtype=3)
    with pytest.raises(ValueError, match="multiple"):
        call(planes=4, x=np.empty(4 * 20, np.uint8), y=np.empty(4 * 80, np.uint8))
    bad = list(taps)
    bad[1] = taps[1].copy()
    bad[1][3] = 4            # row tap past h - 1
    with pytest.raises(IndexError, match="row tap 3"):
        call(taps=bad)
    bad = list(taps)
    bad[4] = taps[4].copy()
    bad[4][0] = -1
    with pytest.raises(IndexError, match="column tap 0"):
        call(taps=bad)
    with pytest.raises(ValueError, match="entries"):
        call(taps=[t[:-1] for t in taps])
