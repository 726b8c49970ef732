# SPDX-License-Identifier: Apache-2.0
"""The direct 2-d pooling kernel (include/qrt/pool2d.h, ``qrt._ops.Pool2dPlan``) and the
batched transpose behind permute (include/qrt/transpose.h), without torch, so the Arm wheels'
qemu runs test them too: a per-output definition of the pools (tests/test_pool2d.py compares
them with torch itself), strided inputs, refused arguments, every permutation against numpy,
and the ASan/UBSan C drivers where a compiler is at hand."""

import numpy as np
import pytest

import qrt
from qrt import _ops
from _cdriver import SANITIZE, run_c_driver


def _pool_ref(kind, x, k, s, p, d, ho, wo, zp=0, qnnpack=False, scale=0.0, cip=True, dov=0):
    """The header's definition, one output at a time (x: [N, C, H, W] codes)."""
    n, c, h, w = x.shape
    qmin, qmax = (-128, 127) if x.dtype == np.int8 else (0, 255)
    y = np.empty((n, c, ho, wo), x.dtype)
    for oy in range(ho):
        for ox in range(wo):
            rows = [oy * s[0] - p[0] + i * d[0] for i in range(k[0])]
            cols = [ox * s[1] - p[1] + j * d[1] for j in range(k[1])]
            rr = [r for r in rows if 0 <= r < h]
            cc = [q for q in cols if 0 <= q < w]
            win = x[:, :, rr][:, :, :, cc].astype(np.int64).reshape(n, c, -1)
            if kind == "max":
                y[:, :, oy, ox] = win.max(-1) if win.shape[-1] else qmin
                continue
            acc = (win - zp).sum(-1).astype(np.int32)
            if qnnpack:
                v = np.rint(acc.astype(np.float32) * np.float32(scale)) + np.float32(zp)
            else:
                sy, sx = oy * s[0] - p[0], ox * s[1] - p[1]
                ey, ex = min(sy + k[0], h + p[0]), min(sx + k[1], w + p[1])
                div = dov or ((ey - sy) * (ex - sx) if cip else len(rr) * len(cc)) or 1
                v = np.rint(acc.astype(np.float32) * np.float32(1.0 / div) + np.float32(zp))
            y[:, :, oy, ox] = np.clip(v, qmin, qmax)
    return y


def _out(L, k, s, p, d, ceil):
    num = L + 2 * p - d * (k - 1) - 1
    if num < 0:
        return 0
    o = (-(-num // s) if ceil else num // s) + 1
    if ceil and (o - 1) * s >= L + p:
        o -= 1
    return o


def test_pool2d_kernel_random_vs_definition():
    """Random geometry (kernels to 5, strides to 3, padding, dilation for max, ceil-mode
    sizes, widths past the vectors), quint8 / qint8, max and both average formulas, at 1 and
    2 threads == the per-output definition."""
    rng = np.random.default_rng(2024)
    done = 0
    before = qrt.get_num_threads()
    try:
        while done < 150:
            kind = "max" if rng.random() < 0.5 else "avg"
            signed = bool(rng.random() < 0.3)
            k = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
            s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
            p = (int(rng.integers(0, k[0] // 2 + 1)), int(rng.integers(0, k[1] // 2 + 1)))
            d = (1, 1) if kind == "avg" or rng.random() < 0.6 else (int(rng.integers(1, 3)), 1)
            ceil = bool(rng.random() < 0.3)
            n, c = int(rng.integers(1, 3)), int(rng.integers(1, 5))
            h, w = int(rng.integers(1, 14)), int(rng.integers(1, 70 if rng.random() < 0.3 else 14))
            ho, wo = _out(h, k[0], s[0], p[0], d[0], ceil), _out(w, k[1], s[1], p[1], d[1], ceil)
            if ho < 1 or wo < 1:
                continue
            dt = np.int8 if signed else np.uint8
            lo, hi = (-128, 127) if signed else (0, 255)
            x = rng.integers(lo, hi + 1, (n, c, h, w)).astype(dt)
            zp = int(rng.integers(lo, hi + 1))
            kw = {}
            if kind == "avg":
                qnnp = not signed and not ceil and rng.random() < 0.5
                kw = dict(qnnpack=qnnp, scale=float(np.float32(1.0 / (k[0] * k[1]))),
                          count_include_pad=bool(rng.random() < 0.5),
                          divisor=int(rng.integers(1, 20)) if rng.random() < 0.2 else 0)
            want = _pool_ref(kind, x, k, s, p, d, ho, wo, zp, kw.get("qnnpack", False),
                             kw.get("scale", 0.0), kw.get("count_include_pad", True),
                             kw.get("divisor", 0))
            plan = _ops.Pool2dPlan(kind, signed, (n, c, h, w), (c * h * w, h * w, w, 1),
                                   (ho, wo), k, s, p, d, zp, **kw)
            for threads in (1, 2):
                qrt.set_num_threads(threads)
                y = np.zeros(n * c * ho * wo, np.uint8)
                plan.run(x.reshape(-1).view(np.uint8), 0, y, 0)
                np.testing.assert_array_equal(y.view(dt).reshape(want.shape), want,
                                              err_msg=f"{kind} {x.shape} {k} {s} {p} {d} {kw}")
            done += 1
    finally:
        qrt.set_num_threads(before)


def test_pool2d_strided_input():
    """The direct kernel reads any non-negative element strides: NHWC-strided and gapped
    inputs give the same codes as their contiguous copy (max and both average formulas)."""
    from qrt import _ops
    rng = np.random.default_rng(7)
    n, c, h, w = 2, 3, 9, 37
    base = rng.integers(0, 256, (n, h, w, c), dtype=np.uint8)       # NHWC memory
    flat = base.reshape(-1)
    nchw = np.ascontiguousarray(base.transpose(0, 3, 1, 2))
    for kind, kw in (("max", {}), ("avg", dict(qnnpack=True, scale=1 / 9)),
                     ("avg", dict(count_include_pad=False, zero_point=7))):
        args = ((n, c, h, w), (3, 3), (2, 2), (1, 1), (1, 1))
        ho, wo = 5, 19
        kwargs = dict(kw)
        zp = kwargs.pop("zero_point", 0)
        a = _ops.Pool2dPlan(kind, False, (n, c, h, w), (h * w * c, 1, w * c, c), (ho, wo),
                            *args[1:], zp, **kwargs)
        b = _ops.Pool2dPlan(kind, False, (n, c, h, w), (c * h * w, h * w, w, 1), (ho, wo),
                            *args[1:], zp, **kwargs)
        ya, yb = np.zeros(n * c * ho * wo, np.uint8), np.ones(n * c * ho * wo, np.uint8)
        a.run(flat, 0, ya, 0)
        b.run(nchw.reshape(-1), 0, yb, 0)
        np.testing.assert_array_equal(ya, yb, err_msg=kind)

def test_pool2d_plan_refuses_bad_arguments():
    from qrt import _ops
    ok = ((1, 1, 4, 4), (16, 16, 4, 1), (2, 2), (2, 2), (2, 2), (0, 0), (1, 1))
    _ops.Pool2dPlan("max", False, *ok)
    bad = [dict(shape=(1, 1, 0, 4)), dict(out_hw=(3, 2)), dict(kernel=(0, 2)),
           dict(strides=(16, 16, -4, 1)), dict(pad=(3, 0)), dict(shape=(1, 1, 4))]
    names = ("shape", "strides", "out_hw", "kernel", "stride", "pad", "dilation")
    for b in bad:
        a = dict(zip(names, ok))
        a.update(b)
        with pytest.raises(ValueError):
            _ops.Pool2dPlan("max", False, *(a[k] for k in names))
    with pytest.raises(ValueError):
        _ops.Pool2dPlan("min", False, *ok)
    with pytest.raises(ValueError):   # QNNPACK's formula: quint8 with a positive scale
        _ops.Pool2dPlan("avg", True, *ok, qnnpack=True, scale=0.25)
    with pytest.raises(ValueError):
        _ops.Pool2dPlan("avg", False, *ok[:-1], (2, 1))   # no dilation for averages
    p = _ops.Pool2dPlan("max", False, *ok)
    with pytest.raises(ValueError):
        p.run(np.zeros(15, np.uint8), 0, np.zeros(4, np.uint8), 0)
    with pytest.raises(ValueError):
        p.run(np.zeros(16, np.uint8), 0, np.zeros(3, np.uint8), 0)
    with pytest.raises(ValueError):
        p.run(np.zeros(16, np.uint8), 1, np.zeros(4, np.uint8), 0)

def test_pool2d_c_driver_sanitized(tmp_path):
    """tests/c/pool2d_sanitize.c under AddressSanitizer + UBSan: random geometry, layouts and
    formulas on exact-size buffers == the per-output definition; hostile parameters refused."""
    for split in ([], ["-DQRT__P2_MT_MIN=1"]):  # the default split, and every call split
        run_c_driver(tmp_path, "pool2d_sanitize.c", (1500, 11), SANITIZE + split)


def test_permute_transpose_kernel_random():
    """Permutations that merge to a (batched) 2-d transpose run the transpose kernel
    (include/qrt/transpose.h): every permutation of 1-5 dims, random sizes (tile edges, sizes
    past its 64-element blocks) and 1 / 2 / 4-byte dtypes == numpy's copy; the others fall
    back to numpy (None)."""
    import itertools
    from qrt.ops.layout import permute_as_transpose
    rng = np.random.default_rng(22)
    fast = 0
    for nd in range(1, 6):
        for dims in itertools.permutations(range(nd)):
            for _ in range(3):
                shape = tuple(int(rng.integers(1, 9 if nd > 3 else 70)) for _ in range(nd))
                for dt in (np.uint8, np.int8, np.float16, np.float32, np.int32):
                    x = rng.integers(0, 255, shape).astype(dt)
                    y = np.full(x.transpose(dims).shape, 7, dt)
                    f = permute_as_transpose(x, dims, y)
                    if f is None:
                        continue
                    f[0](*f[1], **f[2])
                    fast += 1
                    np.testing.assert_array_equal(y, x.transpose(dims), err_msg=f"{shape} {dims}")
    assert fast > 400
    x = np.zeros((1, 96, 112, 112), np.uint8)      # MobileNetV2's FX ReLU6 layout permute
    assert permute_as_transpose(x, (0, 2, 3, 1), np.empty((1, 112, 112, 96), np.uint8))
    assert permute_as_transpose(x, (0, 1, 3, 2), np.empty((1, 96, 112, 112), np.uint8))
    assert permute_as_transpose(x, (0, 2, 1, 3), np.empty((1, 112, 96, 112), np.uint8)) is None
    assert permute_as_transpose(x[:, ::2], (0, 2, 3, 1), np.empty((1, 112, 112, 48), np.uint8)) \
        is None                                      # not contiguous: numpy
    assert permute_as_transpose(np.zeros((4, 5), np.float64), (1, 0),
                                np.empty((5, 4))) is None

def test_transpose2d_refuses_bad_arguments():
    from qrt import _ops
    src, dst = np.zeros(64, np.uint8), np.zeros(64, np.uint8)
    _ops.transpose2d(src, dst, 1, 1, 8, 8, 0, 8)
    for a in ((3, 1, 8, 8, 0, 8), (1, 1, -1, 8, 0, 8), (1, 1, 8, 8, 0, -8), (1, 1, 8, 9, 0, 8),
              (1, 2, 8, 8, 64, 8), (4, 1, 4, 8, 0, 8)):
        with pytest.raises(ValueError):
            _ops.transpose2d(src, dst, *a)

def test_transpose_c_driver_sanitized(tmp_path):
    """tests/c/transpose_sanitize.c under AddressSanitizer + UBSan: random sizes, strides and
    element sizes on exact-size buffers == the definition; bad arguments refused."""
    run_c_driver(tmp_path, "transpose_sanitize.c", (1500, 5))


