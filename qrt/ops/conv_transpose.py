# SPDX-License-Identifier: Apache-2.0
"""conv_transpose1d: quantized ConvTranspose1d (torch.ao.nn.quantized.ConvTranspose1d).

Computed as the conv1d it equals, so the one conv kernel family serves both: the input is
"stuffed" (stride - 1 zero-point codes between samples), padded by d*(K-1) - padding on the
left and d*(K-1) - padding + output_padding on the right (negative: cropped), and convolved at
stride 1 and dilation d with the weight transposed per group and flipped in time. Every
stuffed or padded code equals the input zero point, so it adds (x_zp - x_zp) * w = 0 to each
int32 sum: the accumulators are exactly qnnpack's deconvolution sums, and requantization is
the conv's (the same qnnpack formula). Tested bit-exact against torch's qnnpack engine.

Params (torch's layout, stored once): ``weight`` int8 [C_in, C_out/groups, K],
``weight_scale`` float64 [C_out], ``weight_zero_point`` int32 [C_out], ``bias`` float32.
Weights are per-tensor (torch's qnnpack and default qconfigs quantize ConvTranspose weights
per tensor; a per-output-channel layout would load the same way).
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import Int, Ints, OpDef, ShapeError, define
from qrt.ops.conv import _LAYER_ATTRS, _WEIGHTS, _check_weights, activation_codes

_BIG = 1 << 20


def _geometry(node, L):
    a = node.attrs
    c_in, _, k = node.params["weight"].shape
    s, p, op, d = a["stride"], a["padding"], a["output_padding"], a["dilation"]
    span = d * (k - 1)
    pl, pr = span - p, span - p + op
    full = (L - 1) * s + 1
    cl, cr = max(-pl, 0), max(-pr, 0)
    l_out = (L - 1) * s - 2 * p + span + op + 1
    return s, pl, pr, full, cl, cr, l_out


@define
class ConvTranspose1d(OpDef):
    name, code = "conv_transpose1d", 100
    doc = "quantized ConvTranspose1d (every stride, padding, output_padding, dilation, groups)"
    params = _WEIGHTS
    attrs = dict(_LAYER_ATTRS, stride=Int(1, _BIG, default=1), padding=Int(0, _BIG, default=0),
                 output_padding=Int(0, _BIG, default=0), dilation=Int(1, _BIG, default=1),
                 groups=Int(1, _BIG, default=1))

    def validate(self, node):
        w = node.params["weight"]
        a = node.attrs
        if len(w.shape) != 3 or min(w.shape) < 1:
            raise node.fail(f"weight must be [C_in, C_out/groups, K], has shape {w.shape}")
        c_in, cout_g, k = w.shape
        g = a["groups"]
        if c_in % g:
            raise node.fail(f"in_channels {c_in} is not divisible by groups {g}")
        _check_weights(node, cout_g * g)
        if a["output_padding"] >= max(a["stride"], a["dilation"]):
            raise node.fail("output_padding must be smaller than stride or dilation (torch's "
                            "rule)")
        if a["padding"] > a["dilation"] * (k - 1) + 1 + a["output_padding"]:
            raise node.fail(f"padding {a['padding']} crops more than the kernel's reach",
                            "R26")
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype != "quint8" or y.dtype != "quint8" or \
                "per_tensor_affine" != x.qscheme or y.qscheme != "per_tensor_affine":
            raise node.fail("takes and returns per-tensor quint8 tensors")
        if a["activation"] == "clamp" and not a["clamp_min"] <= a["clamp_max"]:
            raise node.fail("clamp_min must be <= clamp_max")

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        c_in, cout_g, k = node.params["weight"].shape
        if len(x) != 3 or x[1] != c_in or x[2] < 1:
            raise ShapeError(f"input must be [N, {c_in}, L >= 1], got {x}")
        *_, full, cl, cr, l_out = _geometry(node, x[2])
        if l_out < 1 or full - cl - cr < 1:
            raise ShapeError(f"input length {x[2]} gives an output length of {l_out}")
        return [(x[0], cout_g * node.attrs["groups"], l_out)]

    def prepare(self, node):
        import qrt.nn as nn
        a = node.attrs
        w = node.array("weight")
        c_in, cout_g, k = w.shape
        g = a["groups"]
        cin_g = c_in // g
        wc = np.empty((g * cout_g, cin_g, k), np.int8)
        for j in range(g):  # per group: [cin_g, cout_g, K] -> [cout_g, cin_g, K], time flipped
            wc[j * cout_g:(j + 1) * cout_g] = \
                w[j * cin_g:(j + 1) * cin_g].transpose(1, 0, 2)[:, :, ::-1]
        span = a["dilation"] * (k - 1)
        pl = max(span - a["padding"], 0)
        pr = max(span - a["padding"] + a["output_padding"], 0)
        m = nn.Conv1d(c_in, g * cout_g, k, 1, (pl, pr), a["dilation"], g,
                      node.array("bias") is not None)
        y = node.outputs[0]
        m._set_output_qparams(y.scale, y.zero_point)
        m._relu = a["activation"] == "relu"
        m._clamp = activation_codes(a, y.scale, y.zero_point)
        m._install_raw(wc, node.array("weight_scale"), node.array("weight_zero_point"),
                       node.array("bias"), a["weight_qscheme"])
        return m

    def macs(self, node, shapes):
        x = shapes[0]
        c_in, cout_g, k = node.params["weight"].shape
        return int(x[0]) * int(x[2]) * c_in * cout_g * k  # each input sample meets K taps

    def bind(self, node, ins, outs):
        from qrt._storage import Storage
        from qrt._tensor import QTensor, _contiguous_strides, per_tensor_affine, quint8
        x, y, conv = ins[0], outs[0], node.state
        n, c, L = x.shape
        s, pl, pr, full, cl, cr, _ = _geometry(node, L)
        ls = full - cl - cr
        shape = (n, c, ls)
        st = Storage.empty(n * c * ls)
        t = node.inputs[0]
        stuffed = QTensor._wrap(st, shape, _contiguous_strides(shape), 0, quint8,
                                per_tensor_affine, t.scale, t.zero_point, None, None, None)
        codes = stuffed.int_repr()
        codes[...] = t.zero_point
        j0 = -(-cl // s)
        j1 = (full - 1 - cr) // s
        dst = codes[:, :, j0 * s - cl::s][:, :, :j1 - j0 + 1]
        src = x.int_repr()[:, :, j0:j1 + 1]
        copy = np.copyto

        call = conv._call

        def run():
            copy(dst, src)
            call(stuffed, y, False)   # the stuffed buffer is this op's own
        return run, (), {}


# ---- 2-d ---------------------------------------------------------------------------------------
def _geometry2d(node, h, w):
    """Per spatial dim (s, pad_lo, pad_hi, full, crop_lo, crop_hi, out) as _geometry."""
    a = node.attrs
    _, _, kh, kw = node.params["weight"].shape
    out = []
    for i, (L, k) in enumerate(((h, kh), (w, kw))):
        s, p, op, d = (a["stride"][i], a["padding"][i], a["output_padding"][i],
                       a["dilation"][i])
        span = d * (k - 1)
        pl, pr = span - p, span - p + op
        full = (L - 1) * s + 1
        out.append((s, pl, pr, full, max(-pl, 0), max(-pr, 0),
                    (L - 1) * s - 2 * p + span + op + 1))
    return out


@define
class ConvTranspose2d(OpDef):
    """conv_transpose2d: the conv2d it equals (qrt.nn.Conv2d: im2col + the conv1d kernels) over
    the input stuffed with stride - 1 zero-point codes between samples in both dims, padded by
    d*(k-1) - padding (+ output_padding after; negative: cropped), with the weight transposed
    per group and flipped in both dims: qnnpack's deconvolution sums exactly (padding and
    stuffing add (zp - zp) * w = 0), requantized as the conv."""

    name, code = "conv_transpose2d", 115
    doc = ("quantized ConvTranspose2d (every stride, padding, output_padding, dilation, groups; "
           "NCHW)")
    params = _WEIGHTS
    attrs = dict(_LAYER_ATTRS, stride=Ints(2, 1, _BIG, default=[1, 1]),
                 padding=Ints(2, 0, _BIG, default=[0, 0]),
                 output_padding=Ints(2, 0, _BIG, default=[0, 0]),
                 dilation=Ints(2, 1, _BIG, default=[1, 1]), groups=Int(1, _BIG, default=1))

    def validate(self, node):
        from qrt import _conv1d
        w = node.params["weight"]
        a = node.attrs
        if len(w.shape) != 4 or min(w.shape) < 1:
            raise node.fail(f"weight must be [C_in, C_out/groups, kh, kw], has shape {w.shape}")
        c_in, cout_g, kh, kw = w.shape
        g = a["groups"]
        if c_in % g:
            raise node.fail(f"in_channels {c_in} is not divisible by groups {g}")
        if (c_in // g) * kh * kw > _conv1d.MAX_TAPS:
            raise node.fail(f"(in_channels/groups) * kh * kw exceeds the int32 accumulation "
                            f"bound {_conv1d.MAX_TAPS}")
        _check_weights(node, cout_g * g)
        for i, k in enumerate((kh, kw)):
            s, p, op, d = (a["stride"][i], a["padding"][i], a["output_padding"][i],
                           a["dilation"][i])
            if op >= max(s, d):
                raise node.fail("output_padding must be smaller than stride or dilation "
                                "(torch's rule)")
            if p > d * (k - 1) + 1 + op:
                raise node.fail(f"padding {a['padding']} crops more than the kernel's reach",
                                "R26")
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype != "quint8" or y.dtype != "quint8" or \
                "per_tensor_affine" != x.qscheme or y.qscheme != "per_tensor_affine":
            raise node.fail("takes and returns per-tensor quint8 tensors")
        if a["activation"] == "clamp" and not a["clamp_min"] <= a["clamp_max"]:
            raise node.fail("clamp_min must be <= clamp_max")

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        c_in, cout_g, _, _ = node.params["weight"].shape
        if len(x) != 4 or x[1] != c_in or x[2] < 1 or x[3] < 1:
            raise ShapeError(f"input must be [N, {c_in}, H >= 1, W >= 1], got {x}")
        geo = _geometry2d(node, x[2], x[3])
        for *_, full, cl, cr, lo in geo:
            if lo < 1 or full - cl - cr < 1:
                raise ShapeError(f"input {x[2]}x{x[3]} gives an output of "
                                 f"{geo[0][-1]}x{geo[1][-1]}")
        return [(x[0], cout_g * node.attrs["groups"], geo[0][-1], geo[1][-1])]

    def prepare(self, node):
        import qrt.nn as nn
        a = node.attrs
        w = node.array("weight")
        c_in, cout_g, kh, kw = w.shape
        g = a["groups"]
        cin_g = c_in // g
        wc = np.empty((g * cout_g, cin_g, kh, kw), np.int8)
        for j in range(g):  # per group: [cin_g, cout_g, kh, kw] -> [cout_g, cin_g, kh, kw], flipped
            wc[j * cout_g:(j + 1) * cout_g] = \
                w[j * cin_g:(j + 1) * cin_g].transpose(1, 0, 2, 3)[:, :, ::-1, ::-1]
        pads = []
        for i, k in enumerate((kh, kw)):
            span = a["dilation"][i] * (k - 1)
            pads += [max(span - a["padding"][i], 0),
                     max(span - a["padding"][i] + a["output_padding"][i], 0)]
        m = nn.Conv2d(c_in, g * cout_g, (kh, kw), 1, tuple(pads), tuple(a["dilation"]), g,
                      node.array("bias") is not None)
        y = node.outputs[0]
        m._set_output_qparams(y.scale, y.zero_point)
        m._relu = a["activation"] == "relu"
        m._clamp = activation_codes(a, y.scale, y.zero_point)
        m._install_raw(wc.reshape(m._c_out, m._cg, m._k), node.array("weight_scale"),
                       node.array("weight_zero_point"), node.array("bias"), a["weight_qscheme"])
        return m

    def macs(self, node, shapes):
        x = shapes[0]
        c_in, cout_g, kh, kw = node.params["weight"].shape
        return int(x[0]) * int(x[2]) * int(x[3]) * c_in * cout_g * kh * kw

    def bind(self, node, ins, outs):
        from qrt._storage import Storage
        from qrt._tensor import QTensor, _contiguous_strides, per_tensor_affine, quint8
        x, y, conv = ins[0], outs[0], node.state
        n, c, h, w = x.shape
        (sh, _, _, fh, clh, crh, _), (sw, _, _, fw, clw, crw, _) = _geometry2d(node, h, w)
        hs, ws = fh - clh - crh, fw - clw - crw
        shape = (n, c, hs, ws)
        t = node.inputs[0]
        stuffed = QTensor._wrap(Storage.empty(n * c * hs * ws), shape,
                                _contiguous_strides(shape), 0, quint8, per_tensor_affine,
                                t.scale, t.zero_point, None, None, None)
        codes = stuffed.int_repr()
        codes[...] = t.zero_point
        i0, i1 = -(-clh // sh), (fh - 1 - crh) // sh
        j0, j1 = -(-clw // sw), (fw - 1 - crw) // sw
        dst = codes[:, :, i0 * sh - clh::sh, j0 * sw - clw::sw][:, :, :i1 - i0 + 1, :j1 - j0 + 1]
        src = x.int_repr()[:, :, i0:i1 + 1, j0:j1 + 1]
        copy = np.copyto
        call = conv._call

        def run():
            copy(dst, src)
            call(stuffed, y, False)   # the stuffed buffer is this op's own
        return run, (), {}
