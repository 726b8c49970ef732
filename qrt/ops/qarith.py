# SPDX-License-Identifier: Apache-2.0
"""Quantized arithmetic: mul (tensor x tensor, broadcasting, fused relu), mean over the last dim.

``mul`` is torch 2.13's own ``qmul`` kernel (QNNPACK has no mul; the qnnpack engine runs ATen's
generic kernel for quint8): ``c = (a - za) * (b - zb)`` in int32, then
``clamp(zo + rne(f32(c) * m))`` with ``m = f32(f32(sa * sb) * f32(1 / so))`` (every product in
float32, as ``requantize_from_int``); its vector and scalar loops compute the same.
mul_scalar and add_scalar are functions of the code: the exporter lowers them to ``lut``.
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import Choice, Int, OpDef, ShapeError, define, same_qparams

_F32 = np.float32
_RANGE = {"quint8": (0, 255), "qint8": (-128, 127)}


def _codes(v):
    return v.int_repr()


@define
class Mul(OpDef):
    name, code = "mul", 28
    inputs = (2, 2)
    doc = "quantized mul / mul_relu (FloatFunctional.mul, QFunctional, FX), broadcasting"
    attrs = {"activation": Choice("none", "relu", default="none")}

    def validate(self, node):
        for t in node.inputs + node.outputs:
            if t.dtype != "quint8" or t.qscheme != "per_tensor_affine":
                raise node.fail("multiplies per-tensor quint8 tensors (torch runs qint8 mul "
                                "through XNNPACK, which qrt does not reproduce)")

    def infer(self, node, shapes):
        try:
            return [tuple(np.broadcast_shapes(tuple(shapes[0]), tuple(shapes[1])))]
        except ValueError:
            raise ShapeError(f"input shapes {tuple(shapes[0])} and {tuple(shapes[1])} do not "
                             "broadcast") from None

    def bind(self, node, ins, outs):
        a_t, b_t, y_t = node.inputs[0], node.inputs[1], node.outputs[0]
        y = _codes(outs[0])
        shape = y.shape
        a = np.broadcast_to(_codes(ins[0]), shape)
        b = np.broadcast_to(_codes(ins[1]), shape)
        inv = _F32(1.0) / _F32(y_t.scale)
        m = _F32(_F32(_F32(a_t.scale) * _F32(b_t.scale)) * inv)
        za, zb = np.int32(a_t.zero_point), np.int32(b_t.zero_point)
        lo, hi = _RANGE[y_t.dtype]
        if node.attrs["activation"] == "relu":
            lo = max(lo, y_t.zero_point)
        lo, hi = _F32(lo - y_t.zero_point), _F32(hi - y_t.zero_point)
        zo = _F32(y_t.zero_point)
        ia = np.empty(shape, np.int32)
        ib = np.empty(shape, np.int32)
        f = np.empty(shape, _F32)

        def run():
            np.subtract(a, za, out=ia, dtype=np.int32)
            np.subtract(b, zb, out=ib, dtype=np.int32)
            np.multiply(ia, ib, out=ia)
            np.copyto(f, ia, casting="unsafe")     # |c| <= 65025: exact in float32
            np.multiply(f, m, out=f)
            np.rint(f, out=f)                       # lrintf: round half to even
            np.clip(f, lo, hi, out=f)
            np.add(f, zo, out=f)
            np.copyto(y, f, casting="unsafe")
        return run, (), {}


# ---- mean over the last dim ------------------------------------------------------------------
def _ceil_log2(x):
    return 1 if x <= 2 else int(x - 1).bit_length()


def _seq_add(acc, a, tmp):
    """acc += a[:, 0] + a[:, 1] + ... one after the other (ATen's running sum, float32)."""
    for i in range(a.shape[1]):
        np.add(acc, a[:, i], out=acc)


class _AtenSum:
    """Sums of the rows of a float32 [R, L] array in the order of ATen's cascade_sum (2.13,
    SumKernel.cpp, contiguous inner reduction): rows of L >= vec are read as L // vec vectors
    summed by ``row_sum`` (4 interleaved partial sums, each a 4-level cascade of blocks of 16),
    the scalar tail added one by one, then the vector's lanes in order; shorter rows take
    ``row_sum`` on scalars. All buffers are allocated here, once."""

    def __init__(self, x2d, out, vec):
        self.x, self.out, self.vec = x2d, out, vec
        R, L = x2d.shape
        if L >= vec:
            nv = L // vec
            self.elems = x2d[:, :nv * vec].reshape(R, nv, vec)
            self.n = nv
            self.tail = x2d[:, nv * vec:]
            lanes = (vec,)
        else:
            self.elems, self.n, self.tail, lanes = x2d, L, None, ()
        shape = (R, 4) + lanes
        self.acc = [np.zeros(shape, _F32) for _ in range(4)]
        self.p0 = np.zeros((R,) + lanes, _F32)
        size = self.n // 4
        self.size = size
        self.e4 = self.elems[:, :size * 4].reshape((R, size, 4) + lanes)
        lp = max(4, _ceil_log2(size) // 4)
        self.lp, self.step, self.mask = lp, 1 << lp, (1 << lp) - 1
        nb = size // self.step    # whole blocks: their running sums computed side by side
        self.nb = nb
        self.blocks = self.e4[:, :nb * self.step].reshape((R, nb, self.step, 4) + lanes)
        self.bsum = np.zeros((R, nb, 4) + lanes, _F32)

    def __call__(self):
        acc, e4, size, step = self.acc, self.e4, self.size, self.step
        for a in acc:
            a.fill(0)
        bs, blocks = self.bsum, self.blocks
        if self.nb:
            bs.fill(0)
            for j in range(step):      # each block: 0 + x0 + x1 + ... in order
                np.add(bs, blocks[:, :, j], out=bs)
        i = 0
        for b in range(self.nb):
            np.add(acc[0], bs[:, b], out=acc[0])
            i += step
            for j in range(1, 4):
                np.add(acc[j], acc[j - 1], out=acc[j])
                acc[j - 1].fill(0)
                if i & (self.mask << (j * self.lp)):
                    break
        _seq_add(acc[0], e4[:, i:size], None)
        for j in range(1, 4):
            np.add(acc[0], acc[j], out=acc[0])
        p0 = self.p0
        np.copyto(p0, acc[0][:, 0])
        _seq_add(p0, self.elems[:, size * 4:self.n], None)
        for k in range(1, 4):
            np.add(p0, acc[0][:, k], out=p0)
        out = self.out
        if self.tail is None:
            np.copyto(out, p0)
            return
        out.fill(0)
        _seq_add(out, self.tail, None)
        _seq_add(out, p0, None)


@define
class Mean(OpDef):
    name, code = "mean", 31
    doc = ("torch.mean / Tensor.mean over the last dim of a quantized tensor (torch: dequantize, "
           "float32 sum in ATen's order, divide, quantize with the input's qparams)")
    attrs = {"keepdim": Choice("false", "true", default="false"),
             "vec": Int(1, 64, default=8, doc="ATen's float vector width in its sum kernel")}

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype != "quint8" or x.qscheme != "per_tensor_affine":
            raise node.fail("takes a per-tensor quint8 tensor (torch's qint8 mean rounds "
                            "differently; not reproduced)")
        same_qparams(node, x, y, "mean")

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        if not x or x[-1] < 1:
            raise ShapeError(f"mean over the last dim needs a non-empty last dim, got {x}")
        return [x[:-1] + (1,) if node.attrs["keepdim"] == "true" else x[:-1]]

    def bind(self, node, ins, outs):
        from qrt import _quant
        x_t = node.inputs[0]
        codes = _codes(ins[0])
        L = codes.shape[-1]
        rows = codes.reshape(-1, L)
        deq = np.empty(rows.shape, _F32)
        sums = np.empty(rows.shape[0], _F32)
        total = _AtenSum(deq, sums, node.attrs["vec"])
        yflat = _codes(outs[0]).reshape(-1)
        inv = float(_F32(1.0) / _F32(x_t.scale))
        lo, hi = 0, 255
        quant = _quant.quantize_fma_u8
        dequant = _quant.dequantize_tensor
        src, dst = rows.reshape(-1), deq.reshape(-1)
        s32, zp, n = float(_F32(x_t.scale)), int(x_t.zero_point), _F32(L)

        def run():
            dequant(src, dst, s32, zp)
            total()
            np.divide(sums, n, out=sums)
            quant(sums, yflat, inv, float(zp), float(lo), float(hi))
        return run, (), {}
