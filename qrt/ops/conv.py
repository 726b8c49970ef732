# SPDX-License-Identifier: Apache-2.0
"""conv1d, linear (quantized, with a fused activation attribute) and linear_dynamic.

Blobs store each weight once, raw: ``weight`` (int8), ``weight_scale`` (float64 per output
channel), ``weight_zero_point`` (int32), ``bias`` (float32, optional). Packing for the kernels
happens once at load, into one allocation per op (qrt.nn._Base._install_raw), so every CPU
variant reads the same weights and a file cannot hold packed data that disagrees with them.
Files of format < 1.2 also stored ``weight_packed`` / ``weight_sum``: they are ignored.
"""

from __future__ import annotations

import numpy as np

from qrt._geometry import conv_out_len
from qrt.ops._core import Choice, Float, Int, Ints, OpDef, Param, ShapeError, define

_WEIGHTS = (Param("weight", "int8"), Param("weight_scale", "float64"),
            Param("weight_zero_point", "int32"), Param("bias", "float32", optional=True))
_ACT = Choice("none", "relu", "relu6", "clamp", default="none",
              doc="fused activation: relu clamps at the output zero point, relu6 at the codes "
                  "of 0 and 6, clamp at the codes of clamp_min and clamp_max")
_F32 = np.float32


def activation_codes(attrs, scale, zero_point, qmin=0, qmax=255):
    """(lo, hi) output codes of a fused activation, or None for none/relu (the kernel's own).

    A bound v becomes the code ``clamp(zp + rne(f32(v * f32(1/scale))))``, torch's
    ``quantize_val`` as qnnpack's clamp and hardtanh compute their limits."""
    act = attrs.get("activation", "none")
    if act in ("none", "relu"):
        return None
    lo_v, hi_v = (0.0, 6.0) if act == "relu6" else (attrs["clamp_min"], attrs["clamp_max"])
    inv = _F32(1.0) / _F32(scale)

    def code(v):
        return int(min(max(zero_point + int(np.rint(_F32(_F32(v) * inv))), qmin), qmax))
    return code(lo_v), code(hi_v)


def _check_weights(node, c_out):
    """R14 for layer parameters: weight scales usable as float32, zero points in int8 range,
    finite biases (the rule quantize_per_tensor applies to a scale)."""
    sc = node.array("weight_scale")
    zp = node.array("weight_zero_point")
    b = node.array("bias")
    for name, a in (("weight_scale", sc), ("weight_zero_point", zp), ("bias", b)):
        if a is not None and a.shape != (c_out,):
            raise node.fail(f"parameter {name!r} must have shape ({c_out},), has {a.shape}")
    with np.errstate(all="ignore"):
        s32 = sc.astype(np.float32)
        ok = np.isfinite(sc) & (sc > 0) & np.isfinite(s32) & (s32 > 0) & \
            np.isfinite(np.float32(1.0) / s32)
    if not ok.all():
        bad = int(np.argmin(ok))
        raise node.fail(f"weight_scale[{bad}] = {float(sc[bad])!r} must be positive, finite and "
                        "usable as float32 (its reciprocal too)", "R14")
    if zp.size and (zp.min() < -128 or zp.max() > 127):
        raise node.fail("weight_zero_point must lie in [-128, 127]", "R14")
    if b is not None and not np.isfinite(b).all():
        raise node.fail("bias holds NaN or infinity", "R14")


class _Layer(OpDef):
    """Shared by conv1d and linear: weights, fused activation, legacy (format 1.0/1.1) files."""

    params = _WEIGHTS
    module_kinds = ("Conv1d", "ConvReLU1d")
    weight_ndim = 3

    def upgrade(self, node, attrs, params, version):
        # format 1.0/1.1: {"config": {...qrt.nn config()...}, "params": [names]}
        names, config = attrs.get("params"), attrs.get("config")
        if not isinstance(names, list) or not isinstance(config, dict) or \
                len(names) != len(params) or len(set(map(str, names))) != len(names) or \
                set(attrs) - {"params", "config"}:
            raise node.fail("attributes need 'config' (object) and 'params' (one unique name "
                            "per parameter tensor)")
        named = {str(n): t for n, t in zip(names, params)}
        kind = config.get("kind")
        if kind not in self.module_kinds:
            raise node.fail(f"config kind {kind!r} is not one of {self.module_kinds}")
        out = {"weight_qscheme": config.get("weight_qscheme")}
        out.update(self.legacy_geometry(config))
        if config.get("has_bias") is False:
            named.pop("bias", None)
        elif "bias" not in named:
            raise node.fail("config has_bias but no 'bias' parameter")
        keep = {p.name: named[p.name] for p in self.params if p.name in named}
        w = keep.get("weight")
        if w is None:
            raise node.fail("parameter 'weight' is missing")
        if self.legacy_shape(config) != tuple(w.shape):
            raise node.fail(f"config geometry {self.legacy_shape(config)} disagrees with the "
                            f"weight shape {tuple(w.shape)}")
        y = node.outputs[0] if node.outputs else None
        if self.name != "linear_dynamic" and y is not None and \
                (config.get("scale"), config.get("zero_point")) != (y.scale, y.zero_point):
            raise node.fail(f"config output qparams ({config.get('scale')}, "
                            f"{config.get('zero_point')}) disagree with the output tensor's "
                            f"({y.scale}, {y.zero_point})")
        return out, keep

    def encode(self, mod):
        """(attributes, {param: array}) that store qrt.nn layer ``mod`` in a blob (what the
        exporter and tests write): raw weights only, the fused activation as an attribute."""
        mod._need_weight()
        attrs = {"weight_qscheme": mod._qscheme}
        if self.name != "linear_dynamic":
            attrs["activation"] = "relu" if mod._relu else "none"
            if mod._clamp is not None:
                raise ValueError("encode: a layer with a clamp activation stores its bounds "
                                 "(activation='clamp', clamp_min/clamp_max) itself")
        attrs.update(self.encode_geometry(mod))
        w = mod._w if self.weight_ndim == 3 else mod._w.reshape(
            mod._wshape() if self.weight_ndim == 4 else (mod._c_out, mod._c_in))
        arrays = {"weight": w, "weight_scale": np.asarray(mod._wscale, np.float64),
                  "weight_zero_point": np.asarray(mod._wzp, np.int32)}
        if mod._bias is not None:
            arrays["bias"] = np.asarray(mod._bias, np.float32)
        return attrs, arrays

    def encode_geometry(self, mod):
        return {}

    def legacy_geometry(self, config):
        return {}

    def legacy_shape(self, config):
        return (config.get("out_features"), config.get("in_features"))

    def validate_layer(self, node, w_shape_want):
        w = node.params["weight"]
        if len(w.shape) != self.weight_ndim:
            raise node.fail(f"weight must be {self.weight_ndim}-d, has shape {w.shape}")
        c_out = w.shape[0]
        if c_out < 1 or any(d < 1 for d in w.shape):
            raise node.fail(f"weight shape {w.shape} has an empty dimension")
        _check_weights(node, c_out)
        if node.attrs.get("weight_qscheme") == "per_tensor_affine":
            sc, zp = node.array("weight_scale"), node.array("weight_zero_point")
            if (sc != sc[0]).any() or (zp != zp[0]).any():
                raise node.fail("per-tensor weights need one scale and zero point", "R14")
        x, y = node.inputs[0], node.outputs[0]
        dyn = self.name == "linear_dynamic"
        if dyn:
            if x.dtype != "float32" or y.dtype != "float32":
                raise node.fail("takes and returns float32")
        elif x.dtype != "quint8" or x.qscheme != "per_tensor_affine" or \
                y.dtype != "quint8" or y.qscheme != "per_tensor_affine":
            raise node.fail("takes and returns per-tensor quint8 tensors")
        if node.attrs.get("activation") == "clamp" and \
                not node.attrs["clamp_min"] <= node.attrs["clamp_max"]:
            raise node.fail("clamp_min must be <= clamp_max")

    def _finish(self, node, m):
        y = node.outputs[0]
        act = node.attrs.get("activation", "none")
        if self.name != "linear_dynamic":
            m._set_output_qparams(y.scale, y.zero_point)
            m._relu = act == "relu"
            m._clamp = activation_codes(node.attrs, y.scale, y.zero_point)
        w = node.array("weight")
        m._install_raw(w.reshape(m._c_out, m._cg, m._k), node.array("weight_scale"),
                       node.array("weight_zero_point"), node.array("bias"),
                       node.attrs["weight_qscheme"])
        return m

    def macs(self, node, shapes):
        try:
            return int(node.state.macs(tuple(shapes[0])))
        except (ValueError, TypeError, AttributeError):
            return 0

    def bind(self, node, ins, outs):
        m = node.state
        if self.name == "linear_dynamic":   # the checks and buffers once, here
            return m.bound_call(ins[0], outs[0]), (), {}
        from qrt._tensor import _check_out_alias
        _check_out_alias(outs[0], (ins[0],), self.name, exact_ok=False)  # once, at bind
        fast = _direct_binding(m, ins[0], outs[0])
        if fast is not None:
            return fast
        return m._call, (ins[0], outs[0], False), {}

    # GPU: the CuPy backend's layer from the same raw arrays
    def prepare_cuda(self, node, dev):
        return dev.layer_from_node(node, self)

    def bind_cuda(self, node, ins, outs, dev):
        layer, x, y = node.cuda_state, ins[0], outs[0]
        if self.name == "linear_dynamic":
            return lambda: layer.dynamic(x, out=y)
        e = node.outputs[0]
        relu = node.attrs["activation"] == "relu"
        return lambda: layer(x, e.scale, e.zero_point, relu=relu, out=y)


def _direct_binding(m, x, y):
    """A plan's conv2d without im2col (1x1, depthwise) bound to its prepared kernel plan on the
    plan's fixed buffers: the plan ``m._call`` would look up for these buffers (same key, same
    object), resolved once here instead of per call (~2 us of Python per layer).  None: bind
    ``m._call``."""
    from qrt.nn import Conv2d as _NNConv2d
    if not isinstance(m, _NNConv2d):
        return None
    key = (x._shape, x._strides, x._dtype, x._qscheme, x._scale, x._zero_point,
           m.scale, m.zero_point, m._variant)
    entry = m._plans.get(key)
    if entry is None:
        entry = m._conv2d_plan(x)
    im, plan, oshape, _ = entry
    if im is not None or m._out_qtensor(y, oshape) is not y:
        return None
    return plan.bind_u8(x._storage, x._offset, y._storage, y._offset), (), {}


_LAYER_ATTRS = {"activation": _ACT,
                "clamp_min": Float(default=0.0), "clamp_max": Float(default=6.0),
                "weight_qscheme": Choice("per_tensor_affine", "per_channel_affine",
                                         default="per_channel_affine")}


@define
class Conv1d(_Layer):
    name, code = "conv1d", 3
    legacy = {"conv_relu1d": (4, {"activation": "relu"})}
    doc = "quantized Conv1d / ConvReLU1d (eager, FX, QAT-converted); NCL, quint8"
    attrs = dict(_LAYER_ATTRS, stride=Int(1, 1 << 20, default=1),
                 padding=Ints(2, 0, 1 << 24, default=[0, 0]),
                 dilation=Int(1, 1 << 20, default=1), groups=Int(1, 1 << 20, default=1))

    def encode_geometry(self, mod):
        return {"stride": mod._s, "padding": [mod._pl, mod._pr], "dilation": mod._d,
                "groups": mod._g}

    def legacy_shape(self, config):
        g, c_in = config.get("groups"), config.get("in_channels")
        cg = c_in // g if type(g) is int and type(c_in) is int and g > 0 else None
        return (config.get("out_channels"), cg, config.get("kernel_size"))

    def legacy_geometry(self, config):
        pad = config.get("padding")
        if isinstance(pad, int) and type(pad) is not bool:
            pad = [pad, pad]
        return {"stride": config.get("stride"), "padding": pad,
                "dilation": config.get("dilation"), "groups": config.get("groups")}

    def validate(self, node):
        from qrt import _conv1d
        self.validate_layer(node, None)
        w = node.params["weight"].shape
        g = node.attrs["groups"]
        c_out, cg, k = w
        if c_out % g:
            raise node.fail(f"out_channels {c_out} is not divisible by groups {g}")
        if cg * k > _conv1d.MAX_TAPS:
            raise node.fail(f"(in_channels/groups) * kernel_size = {cg} * {k} exceeds the int32 "
                            f"accumulation bound {_conv1d.MAX_TAPS}")
        span = node.attrs["dilation"] * (k - 1)
        if max(node.attrs["padding"]) > span + 1:
            raise node.fail(f"padding {node.attrs['padding']} is wider than the kernel's reach "
                            f"dilation*(kernel_size-1)+1 = {span + 1}: the extra outputs would "
                            "see no input (R26)", "R26")

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        c_out, cg, k = node.params["weight"].shape
        a = node.attrs
        if len(x) not in (2, 3):
            raise ShapeError(f"input must be [N, C_in, L] or [C_in, L], got {x}")
        if x[-2] != cg * a["groups"]:
            raise ShapeError(f"input has {x[-2]} channels, the layer expects {cg * a['groups']}")
        if x[-1] < 1:
            raise ShapeError("input length must be >= 1")
        lo = conv_out_len(x[-1], k, a["stride"], a["padding"][0], a["padding"][1],
                          a["dilation"])
        if lo < 1:
            raise ShapeError(f"input length {x[-1]} is too short for kernel_size={k}, "
                             f"dilation={a['dilation']}, padding={tuple(a['padding'])}, "
                             f"stride={a['stride']}")
        return [x[:-2] + (c_out, lo)]

    def prepare(self, node):
        import qrt.nn as nn
        c_out, cg, k = node.params["weight"].shape
        a = node.attrs
        m = nn.Conv1d(cg * a["groups"], c_out, k, a["stride"], tuple(a["padding"]),
                      a["dilation"], a["groups"], node.array("bias") is not None)
        return self._finish(node, m)


@define
class Conv2d(_Layer):
    """conv2d: a conv1d over an im2col layout of the input, depthwise layers (groups ==
    in_channels) on the direct kernel of include/qrt/dwconv2d.h (qrt.nn.Conv2d,
    docs/architecture.md "conv2d"); padding is [top, bottom, left, right]."""

    name, code = "conv2d", 110
    doc = "quantized Conv2d / ConvReLU2d (eager, FX, QAT-converted); NCHW, quint8"
    module_kinds = ("Conv2d", "ConvReLU2d")
    weight_ndim = 4
    attrs = dict(_LAYER_ATTRS, stride=Ints(2, 1, 1 << 20, default=[1, 1]),
                 padding=Ints(4, 0, 1 << 24, default=[0, 0, 0, 0]),
                 dilation=Ints(2, 1, 1 << 20, default=[1, 1]),
                 groups=Int(1, 1 << 20, default=1))

    def upgrade(self, node, attrs, params, version):  # a 1.2 op: no older layout
        return OpDef.upgrade(self, node, attrs, params, version)

    def encode_geometry(self, mod):
        return {"stride": list(mod._s2), "padding": list(mod._pads),
                "dilation": list(mod._d2), "groups": mod._g}

    def validate(self, node):
        from qrt import _conv1d
        self.validate_layer(node, None)
        c_out, cg, kh, kw = node.params["weight"].shape
        a = node.attrs
        g = a["groups"]
        if c_out % g:
            raise node.fail(f"out_channels {c_out} is not divisible by groups {g}")
        if cg * kh * kw > _conv1d.MAX_TAPS:
            raise node.fail(f"(in_channels/groups) * kh * kw = {cg} * {kh} * {kw} exceeds the "
                            f"int32 accumulation bound {_conv1d.MAX_TAPS}")
        t, b, l_, r = a["padding"]
        for what, (p0, p1), k, d in (("height", (t, b), kh, a["dilation"][0]),
                                     ("width", (l_, r), kw, a["dilation"][1])):
            if max(p0, p1) > d * (k - 1) + 1:
                raise node.fail(f"{what} padding ({p0}, {p1}) is wider than the kernel's reach "
                                f"dilation*(kernel-1)+1 = {d * (k - 1) + 1}: the extra outputs "
                                "would see no input (R26)", "R26")

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        c_out, cg, kh, kw = node.params["weight"].shape
        a = node.attrs
        if len(x) not in (3, 4):
            raise ShapeError(f"input must be [N, C_in, H, W] or [C_in, H, W], got {x}")
        if x[-3] != cg * a["groups"]:
            raise ShapeError(f"input has {x[-3]} channels, the layer expects {cg * a['groups']}")
        if x[-1] < 1 or x[-2] < 1:
            raise ShapeError(f"input height and width must be >= 1, got {x[-2:]}")
        t, b, l_, r = a["padding"]
        ho = conv_out_len(x[-2], kh, a["stride"][0], t, b, a["dilation"][0])
        wo = conv_out_len(x[-1], kw, a["stride"][1], l_, r, a["dilation"][1])
        if ho < 1 or wo < 1:
            raise ShapeError(f"input {x[-2]}x{x[-1]} is too small for kernel {kh}x{kw}, "
                             f"dilation={a['dilation']}, padding={a['padding']}, "
                             f"stride={a['stride']}")
        return [x[:-3] + (c_out, ho, wo)]

    def prepare(self, node):
        import qrt.nn as nn
        c_out, cg, kh, kw = node.params["weight"].shape
        a = node.attrs
        m = nn.Conv2d(cg * a["groups"], c_out, (kh, kw), tuple(a["stride"]),
                      tuple(a["padding"]), tuple(a["dilation"]), a["groups"],
                      node.array("bias") is not None)
        return self._finish(node, m)

    prepare_cuda = OpDef.prepare_cuda  # no CuPy conv2d yet: the backend refuses the model


class _LinearBase(_Layer):
    module_kinds = ("Linear", "LinearReLU")
    weight_ndim = 2

    def validate(self, node):
        self.validate_layer(node, None)

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        c_out, c_in = node.params["weight"].shape
        if len(x) < 1 or x[-1] != c_in:
            raise ShapeError(f"input must be [..., {c_in}], got {x}")
        return [x[:-1] + (c_out,)]


@define
class Linear(_LinearBase):
    name, code = "linear", 5
    legacy = {"linear_relu": (6, {"activation": "relu"})}
    doc = "quantized Linear / LinearReLU; [..., in] quint8"
    attrs = dict(_LAYER_ATTRS)

    def prepare(self, node):
        import qrt.nn as nn
        c_out, c_in = node.params["weight"].shape
        return self._finish(node, nn.Linear(c_in, c_out, node.array("bias") is not None))


@define
class LinearDynamic(_LinearBase):
    name, code = "linear_dynamic", 7
    module_kinds = ("DynamicLinear",)
    doc = "dynamic quantized Linear (quantize_dynamic): float32 in and out"
    attrs = {"weight_qscheme": _LAYER_ATTRS["weight_qscheme"],
             "activation": Choice("none", default="none")}

    def prepare(self, node):
        import qrt.nn as nn
        c_out, c_in = node.params["weight"].shape
        return self._finish(node, nn.DynamicLinear(c_in, c_out,
                                                   node.array("bias") is not None))
