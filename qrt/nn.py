# SPDX-License-Identifier: Apache-2.0
"""Quantized layers with prepacked weights, bit-exact with torch 2.13's qnnpack engine.

``Conv1d``, ``ConvReLU1d``, ``Linear``, ``LinearReLU`` mirror ``torch.ao.nn.quantized`` /
``torch.ao.nn.intrinsic.quantized``; ``DynamicLinear`` mirrors
``torch.ao.nn.quantized.dynamic.Linear``.  Weights are packed once, in ``set_weight_bias`` (or
taken as they are by ``from_packed``); a call never repacks and never loops over elements in
Python.  The integer arithmetic is described in docs/kernels.md.

Model-loader contract
---------------------
Every layer class offers:

``packed_arrays() -> dict[str, numpy.ndarray]``
    The exact C-contiguous arrays the kernels read (no copies are made by this method):

    =======================  =======  =====================  =====================================
    key                      dtype    shape                  meaning
    =======================  =======  =====================  =====================================
    ``weight``               int8     [c_out, c_in/g, K]     raw weight integers (linear: [out,
                                                             in]), read by the reference kernel
    ``weight_packed``        int8     [c_out * Kc * CQ * 4]  "quad-v1" layout (conv1d_pack.h),
                                                             read by the AVX-512 VNNI kernels
                                                             (elsewhere a layer keeps none and
                                                             this method packs it on demand)
    ``weight_sum``           int32    [c_out]                sum of each channel's weights
    ``weight_scale``         float64  [c_out]                weight scales (per-tensor: repeated)
    ``weight_zero_point``    int32    [c_out]                weight zero points (likewise)
    ``bias``                 float32  [c_out]                only when the layer has a bias
    =======================  =======  =====================  =====================================

``config() -> dict``
    Plain Python scalars / lists / strings: ``kind`` (class name), ``in_channels``,
    ``out_channels`` (linear: ``in_features`` / ``out_features``), ``kernel_size``, ``stride``,
    ``padding`` ([left, right]), ``dilation``, ``groups``, ``has_bias``, ``scale``,
    ``zero_point`` (output qparams; absent for DynamicLinear), ``weight_qscheme``
    ('per_tensor_affine' or 'per_channel_affine'), ``weight_axis`` (0), ``packing``
    ('quad-v1'), ``packed_layout`` ([im2col, Kc, CQ]).

``from_packed(config, arrays) -> layer`` (classmethod)
    Rebuilds the layer around the given arrays without copying or repacking them; they may be
    read-only views of an mmap and are never written.  Shapes, dtypes, contiguity and the packed
    layout are validated against the config (ValueError / TypeError naming the key).

``__call__(x, *, out=None)``
    ``out``, when given, is a preallocated C-contiguous QTensor of the output shape, dtype quint8
    (float32 numpy array for DynamicLinear) with exactly the layer's output scale/zero point; the
    result is written into it and it is returned.

``output_shape(input_shape)`` and ``macs(input_shape)`` (multiply-accumulates, padded taps
included: N * c_out * L_out * c_in/groups * K).

Requantization constants (int32 bias, requant scale) depend on the input scale; each layer
caches them per input scale, so repeated calls do not recompute them.  Layers are safe to call
from several threads (the kernel scratch is taken from the layer and put back after the call; a
concurrent call allocates its own).
"""

from __future__ import annotations

import operator

import numpy as np

from qrt import _conv1d, _quant
from qrt._geometry import conv_out_len
from qrt.quantization import choose_qparams  # noqa: F401  (qrt.nn.choose_qparams)
from qrt._storage import Storage
from qrt._tensor import (QTensor, _check_out_alias, _check_scale, _check_zero_point,
                         _contiguous_strides, qint8,
                         quint8, per_tensor_affine)

__all__ = ["Conv1d", "ConvReLU1d", "Conv2d", "ConvReLU2d", "Linear", "LinearReLU", "DynamicLinear",
           "UnsupportedError"]

PACKING = "quad-v1"
_INT32_MIN = -(2**31)

_NO_PACK = np.empty(0, np.int8)  # the packed weight a plan gets where its kernel reads none


def _packed_needed():
    """Whether this CPU's conv1d kernels read the quad-packed weight: only the AVX-512 VNNI
    variant does (the NEON, NEON-dot, AVX2 and reference kernels read the raw weight, plus
    their own per-layer forms), so elsewhere a layer keeps no copy of it (qrt.nn._Base._packed
    makes one if asked: packed_arrays(), a forced VNNI variant)."""
    return any(_conv1d.ISA_NAMES[v] == "avx512vnni" for v in _conv1d.variants())


def _pack(w3, c_out, cg, k):
    """(packed weight or None, weight sums) of a [c_out, cg, k] int8 weight: the packed weight
    and the sums in one allocation where _packed_needed(), else the sums alone (int32, as
    pack_weights sums them)."""
    if not _packed_needed():
        return None, w3.reshape(c_out, -1).sum(axis=1, dtype=np.int32)
    n = _conv1d.packed_weight_size(c_out, cg, k)
    head = -(-n // 64) * 64
    buf = np.empty(head + 4 * c_out, np.uint8)
    wpack = buf[:n].view(np.int8)
    wsum = buf[head:].view(np.int32)
    _conv1d.pack_weights(w3, wpack, wsum)
    return wpack, wsum


class UnsupportedError(NotImplementedError, ValueError):
    """Raised for what torch's quantized ops refuse with NotImplementedError (also a ValueError).

    Public, so that a traceback names a class the user can catch: ``qrt.nn.UnsupportedError``.
    """


_Unsupported = UnsupportedError   # the old private name, for code that caught it


_MAX_GEOMETRY = (1 << 31) - 1  # sizes, strides, padding: the kernels take 32-bit sizes


def _pos_int(v, what, minimum=1):
    if isinstance(v, (bool, np.bool_)):  # torch's argument parser refuses bools as ints
        raise TypeError(f"{what} must be an integer, got bool ({v!r})")
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(v).__name__}") from None
    if i < minimum:
        raise ValueError(f"{what}={i} must be >= {minimum}")
    if i > _MAX_GEOMETRY:
        raise ValueError(f"{what}={i} is too large (at most {_MAX_GEOMETRY})")
    return int(i)


def _single(v, what, minimum=1):
    """int or 1-tuple -> int (torch's _single)."""
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise ValueError(f"{what} must be an int or a 1-element sequence, got {v!r}")
        v = v[0]
    return _pos_int(v, what, minimum)


def _padding(padding, kernel, dilation, stride):
    """(left, right) for an int / 1-tuple / 'valid' / 'same' (torch float conv's rule)."""
    if isinstance(padding, str):
        if padding == "valid":
            return 0, 0
        if padding == "same":
            if stride != 1:
                raise ValueError("padding='same' is not supported for strided convolutions "
                                 f"(stride={stride}), as in torch")
            total = dilation * (kernel - 1)
            return total // 2, total - total // 2
        raise ValueError(f"padding must be an int, 'same' or 'valid', got {padding!r}")
    if isinstance(padding, (tuple, list)) and len(padding) == 2:
        return _pos_int(padding[0], "padding", 0), _pos_int(padding[1], "padding", 0)
    p = _single(padding, "padding", 0)
    return p, p


def _bias_array(bias, c_out):
    if bias is None:
        return None
    arr = np.asarray(bias)
    if arr.dtype.kind != "f":
        raise TypeError(f"bias must be a float array or None, got dtype {arr.dtype}")
    if arr.shape != (c_out,):
        raise ValueError(f"bias must have shape ({c_out},), got {arr.shape}")
    return np.array(arr, dtype=np.float32, order="C", copy=True)  # the layer owns its bias


def _weight_parts(w, ndim, what="weight"):
    """int8 integers (C-contiguous), float64 scales [c_out], int32 zero points [c_out], qscheme."""
    if not isinstance(w, QTensor):
        raise TypeError(f"{what} must be a qrt.QTensor, got {type(w).__name__}")
    if w.dtype is not qint8:
        raise TypeError(f"{what} must be quantized to qrt.qint8, got {w.dtype!r}")
    if w.ndim != ndim:
        raise ValueError(f"{what} must be {ndim}-d, got shape {w.shape}")
    c_out = w.shape[0]
    ints = np.array(w.int_repr(), order="C", copy=True)  # the layer owns its weight
    if w.qscheme() is per_tensor_affine:
        sc = np.full(c_out, float(w.q_scale()), np.float64)
        zp = np.full(c_out, int(w.q_zero_point()), np.int32)
        qs = "per_tensor_affine"
    else:
        if w.q_per_channel_axis() != 0:
            raise ValueError(f"{what}: per-channel weights must be quantized along axis 0, got "
                             f"axis {w.q_per_channel_axis()}")
        sc = np.ascontiguousarray(w._scales, dtype=np.float64).copy()
        zp = w._zero_points.astype(np.int32)
        qs = "per_channel_affine"
    return ints, sc, zp, qs


def _input_qtensor(x, what="input"):
    if not isinstance(x, QTensor):
        raise TypeError(f"{what} must be a qrt.QTensor, got {type(x).__name__}")
    if x.dtype is not quint8:
        raise TypeError(f"{what} must be quantized to qrt.quint8 (as torch requires), got "
                        f"{x.dtype!r}")
    if x.qscheme() is not per_tensor_affine:
        raise ValueError(f"{what} must be per-tensor quantized")
    return x


class _Base:
    """Shared state: raw/packed weight, per-channel weight qparams, bias, caches."""

    _relu = False
    _dynamic = False
    _clamp = None  # (lo, hi) output codes of a fused clamp (relu6, hardtanh), set by qrt.ops

    # ---- construction ------------------------------------------------------------------------
    def _init_geometry(self, c_in, c_out, kernel, stride, pad_l, pad_r, dilation, groups):
        if c_in % groups:
            raise ValueError(f"in_channels={c_in} must be divisible by groups={groups}")
        if c_out % groups:
            raise ValueError(f"out_channels={c_out} must be divisible by groups={groups}")
        cg = c_in // groups
        if cg * kernel > _conv1d.MAX_TAPS:
            raise ValueError(f"(in_channels/groups) * kernel_size = {cg} * {kernel} exceeds the "
                             f"int32 accumulation bound {_conv1d.MAX_TAPS} (see docs/kernels.md)")
        self._c_in, self._c_out, self._k = c_in, c_out, kernel
        self._s, self._pl, self._pr, self._d, self._g = stride, pad_l, pad_r, dilation, groups
        self._cg = cg
        self._layout = list(_conv1d.layout(cg, kernel))
        self._w = None
        self._cache = {}
        self._plans = {}

    def _set_output_qparams(self, scale, zero_point):
        self.scale = _check_scale(scale, "scale")
        self.zero_point = _check_zero_point(zero_point, quint8, "zero_point")

    def _adopt(self, w3, wpack, wsum, wscale, wzp, bias, qscheme):
        """Install weight arrays (already validated; never copied or written)."""
        self._w = w3
        self._wpack, self._wsum = wpack, wsum
        self._wscale, self._wzp = wscale, wzp
        self._bias = bias
        self._zeros_f = np.zeros(self._c_out, np.float32)
        self._zeros_i = np.zeros(self._c_out, np.int32)
        self._qscheme = qscheme
        self._wscale32 = wscale.astype(np.float32)
        self._cache = {}
        self._plans = {}

    def _install_raw(self, w3, wscale, wzp, bias, qscheme):
        """Adopt raw weights read in place (validated by the caller) and pack them once, into
        one allocation holding the packed weight and the weight sums (what a loaded model
        does: blobs store each weight once, raw).  Where no kernel reads the packed weight
        (_packed_needed), only the sums are made."""
        wpack, wsum = _pack(w3, self._c_out, self._cg, self._k)
        self._adopt(w3, wpack, wsum, wscale, wzp, bias, qscheme)
        return self

    def _packed(self):
        """The quad-packed weight ("weight_packed"), made now if the layer was installed on a
        CPU whose kernels do not read it (see _packed_needed)."""
        if self._wpack is None:
            wpack = np.empty(_conv1d.packed_weight_size(self._c_out, self._cg, self._k),
                             np.int8)
            _conv1d.pack_weights(self._w, wpack, np.empty(self._c_out, np.int32))
            self._wpack = wpack
        return self._wpack

    def _set(self, qweight, bias, ndim):
        ints, sc, zp, qs = _weight_parts(qweight, ndim)
        w3 = ints.reshape(ints.shape[0], ints.shape[1], -1)
        want = (self._c_out, self._cg, self._k)
        if w3.shape != want:
            raise ValueError(f"weight has shape {qweight.shape}, expected "
                             f"{want if ndim == 3 else want[:2]}")
        b = _bias_array(bias, self._c_out)
        wpack, wsum = _pack(w3, self._c_out, self._cg, self._k)
        self._adopt(w3, wpack, wsum, sc, zp, b, qs)

    # ---- accessors ---------------------------------------------------------------------------
    def _need_weight(self):
        if self._w is None:
            raise ValueError(f"{type(self).__name__}: call set_weight_bias() first")

    def weight(self) -> QTensor:
        """The quantized weight (a QTensor over the stored integers, no copy)."""
        self._need_weight()
        from qrt._tensor import from_int_repr, from_int_repr_per_channel
        ints = self._w if self._wshape_ndim == 3 else self._w.reshape(self._c_out, self._c_in)
        if self._qscheme == "per_tensor_affine":
            return from_int_repr(ints, float(self._wscale[0]), int(self._wzp[0]), qint8)
        return from_int_repr_per_channel(ints, self._wscale, self._wzp.astype(np.int64), 0,
                                         qint8)

    def bias(self):
        """The float32 bias, or None."""
        self._need_weight()
        return self._bias

    def _bias_f(self):
        return self._zeros_f if self._bias is None else self._bias

    # ---- loader contract ---------------------------------------------------------------------
    def packed_arrays(self) -> dict:
        self._need_weight()
        d = {"weight": self._w if self._wshape_ndim == 3 else
             self._w.reshape(self._c_out, self._c_in),
             "weight_packed": self._packed(), "weight_sum": self._wsum,
             "weight_scale": self._wscale, "weight_zero_point": self._wzp}
        if self._bias is not None:
            d["bias"] = self._bias
        return d

    def _base_config(self):
        self._need_weight()
        return {"kind": type(self).__name__, "has_bias": self._bias is not None,
                "weight_qscheme": self._qscheme, "weight_axis": 0, "packing": PACKING,
                "packed_layout": list(self._layout)}

    @staticmethod
    def _arr(arrays, key, dtype, shape):
        if key not in arrays:
            raise ValueError(f"from_packed: missing array {key!r}")
        a = arrays[key]
        if not isinstance(a, np.ndarray):
            raise TypeError(f"from_packed: {key!r} must be a numpy array")
        if a.dtype != np.dtype(dtype):
            raise TypeError(f"from_packed: {key!r} must be {np.dtype(dtype)}, got {a.dtype}")
        if a.shape != tuple(shape):
            raise ValueError(f"from_packed: {key!r} must have shape {tuple(shape)}, got {a.shape}")
        if not a.flags.c_contiguous:
            raise ValueError(f"from_packed: {key!r} must be C-contiguous")
        return a

    def _load(self, config, arrays, wshape):
        if config.get("packing") != PACKING:
            raise ValueError(f"from_packed: packing {config.get('packing')!r} is not {PACKING!r}")
        if list(config.get("packed_layout", [])) != self._layout:
            raise ValueError(f"from_packed: packed_layout {config.get('packed_layout')!r} does "
                             f"not match this geometry ({self._layout})")
        qs = config.get("weight_qscheme")
        if qs not in ("per_tensor_affine", "per_channel_affine"):
            raise ValueError(f"from_packed: weight_qscheme {qs!r} is not supported")
        c = self._c_out
        w = self._arr(arrays, "weight", np.int8, wshape)
        wp = self._arr(arrays, "weight_packed", np.int8,
                       (_conv1d.packed_weight_size(c, self._cg, self._k),))
        ws = self._arr(arrays, "weight_sum", np.int32, (c,))
        sc = self._arr(arrays, "weight_scale", np.float64, (c,))
        zp = self._arr(arrays, "weight_zero_point", np.int32, (c,))
        if not (np.all(np.isfinite(sc)) and np.all(sc > 0)):
            raise ValueError("from_packed: 'weight_scale' must be positive and finite")
        if np.any(zp < -128) or np.any(zp > 127):
            raise ValueError("from_packed: 'weight_zero_point' must lie in [-128, 127]")
        b = self._arr(arrays, "bias", np.float32, (c,)) if config.get("has_bias") else None
        self._adopt(w.reshape(c, self._cg, self._k), wp, ws, sc, zp, b, qs)
        return self

    # ---- per-call helpers --------------------------------------------------------------------
    def _requant(self, in_scale):
        """(int32 bias, float32 requant scale) for this input scale, cached."""
        hit = self._cache.get(in_scale)
        if hit is not None:
            return hit
        sa = np.float32(in_scale)
        rs = (self._wscale32 * sa) * (np.float32(1.0) / np.float32(self.scale))
        if self._bias is None:
            bq = self._zeros_i
        else:
            # torch QuantizeBias: quantize to qint32 with scale (double)w_scale*(double)in_scale,
            # the non-fused per-channel formula rne(f32(f32(b * f32(1/f32(s))) + 0)).
            s32 = (self._wscale * float(in_scale)).astype(np.float32)
            with np.errstate(divide="ignore", over="ignore"):
                inv = np.float32(1.0) / s32
            bq = np.empty(self._c_out, np.int32)
            _quant.quantize_rows(self._bias.reshape(1, -1, 1), bq.reshape(1, -1, 1), inv,
                                 self._zeros_f, float(_INT32_MIN), float(2**31 - 1), _INT32_MIN)
        if len(self._cache) > 16:
            self._cache.clear()
        self._cache[in_scale] = (bq, rs)
        return bq, rs

    def _len_out(self, len_in):
        return conv_out_len(len_in, self._k, self._s, self._pl, self._pr, self._d)

    def _make_plan(self, x_shape, x_strides, y_shape, y_strides, in_scale, in_zp, rs=None):
        """A prepared kernel call for [n, c, t] input / output geometry (element strides)."""
        if self._dynamic:
            bq = self._zeros_i
            if rs is None:
                rs = np.empty(self._c_out, np.float32)
            np.multiply(self._wscale32, np.float32(in_scale), out=rs)  # f32(sw * f32(s))
            lo, hi, oz = 0, 255, 0
        else:
            # the output qparams are plain attributes (as in torch): validate them here
            _check_scale(self.scale, "scale")
            _check_zero_point(self.zero_point, quint8, "zero_point")
            bq, rs = self._requant(in_scale)
            oz = self.zero_point
            lo, hi = (oz if self._relu else 0), 255
            if self._clamp is not None:  # a fused activation's code bounds (qrt.ops.conv)
                lo, hi = self._clamp
        # One output position: the stride never moves the window, and the kernels' scratch
        # grows with the stride (a crafted stride of 2^20 took seconds per call): use 1.
        stride = 1 if y_shape[-1] == 1 else self._s
        vnni = _conv1d.ISA_NAMES.get(_conv1d.variant(self._variant)) == "avx512vnni"
        return _conv1d.Plan(self._w, self._packed() if vnni else _NO_PACK, self._wsum, self._wzp,
                            bq, rs, self._bias_f(),
                            x_shape, x_strides, y_shape, y_strides, stride=stride,
                            dilation=self._d, pad_left=self._pl, groups=self._g,
                            input_zero=in_zp, output_zero=oz, output_min=lo, output_max=hi,
                            out_f32=self._dynamic, variant=self._variant,
                            wpack_cl=self._cl_weight(x_shape, x_strides, y_shape, y_strides))

    def _cl_weight(self, x_shape, x_strides, y_shape, y_strides):
        """The channels-in-lanes weight (made once, on first use) when the call is a dense 1x1
        layer over short unit-stride rows on an AVX-512 VNNI host (docs/kernels.md, "1x1 on
        short rows"); else None."""
        if (self._dynamic or self._k != 1 or self._g != 1 or self._pl or self._pr or
                x_strides[2] != 1 or y_strides[2] != 1 or x_shape[2] != y_shape[2] or
                not 0 < y_shape[2] <= _conv1d.cl_max_len() or
                _conv1d.ISA_NAMES.get(_conv1d.variant(self._variant)) != "avx512vnni"):
            return None
        wcl = getattr(self, "_wpack_cl", None)
        if wcl is None or wcl[0] is not self._packed():
            wcl = (self._wpack, _conv1d.pack_cl(self._wpack, self._c_out, self._c_in))
            self._wpack_cl = wcl
        return wcl[1]

    def _remember(self, key, plan):
        if len(self._plans) > 32:
            self._plans.clear()
        self._plans[key] = plan
        return plan

    _variant = -1  # tests set 0 on an instance to force the reference kernel

    def _out_qtensor(self, out, shape):
        if out is None:
            n = 1
            for d in shape:
                n *= d
            return QTensor._wrap(Storage.empty(n), shape, _contiguous_strides(shape), 0, quint8,
                                 per_tensor_affine, self.scale, self.zero_point, None, None,
                                 None)
        if (type(out) is QTensor and out._shape == shape and out._dtype is quint8 and
                out._qscheme is per_tensor_affine and out._scale == self.scale and
                out._zero_point == self.zero_point and not out._storage.readonly and
                out._strides == _contiguous_strides(shape)):
            return out
        return self._check_out(out, shape)

    def _check_out(self, out, shape):
        if not isinstance(out, QTensor):
            raise TypeError(f"out must be a qrt.QTensor, got {type(out).__name__}")
        if out.dtype is not quint8 or out.qscheme() is not per_tensor_affine:
            raise TypeError("out must be a per-tensor qrt.quint8 QTensor")
        if out.shape != shape:
            raise ValueError(f"out has shape {out.shape}, expected {shape}")
        if not out.is_contiguous():
            raise ValueError("out must be contiguous")
        if (np.float32(out.q_scale()) != np.float32(self.scale) or
                out.q_zero_point() != self.zero_point):
            raise ValueError(f"out has qparams ({out.q_scale()}, {out.q_zero_point()}); the "
                             f"layer's are ({self.scale}, {self.zero_point})")
        if out.storage().readonly:
            raise ValueError("out is read-only")
        return out


# ---- conv1d -----------------------------------------------------------------------------------
class Conv1d(_Base):
    """Quantized 1-d convolution (``torch.ao.nn.quantized.Conv1d``), qnnpack arithmetic.

    Parameters
    ----------
    in_channels, out_channels, kernel_size, stride, dilation, groups : int
    padding : int, (left, right), 'valid' or 'same'
        'same' follows torch's float conv rule (left = d*(K-1)//2, the rest on the right;
        stride 1 only).  torch's quantized conv refuses string padding; qrt accepts it.
    bias : bool
        Whether ``set_weight_bias`` expects a bias (torch ignores it too: a None bias is allowed).
    padding_mode : 'zeros'
        The only mode torch's quantized conv supports.

    Input ``[N, C_in, L]`` or unbatched ``[C_in, L]`` quint8 per-tensor QTensor, any strides
    (read in place).  Output ``[N, C_out, L_out]`` quint8 with ``scale``/``zero_point``.
    """

    _wshape_ndim = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros"):
        if padding_mode != "zeros":
            raise UnsupportedError(f"padding_mode={padding_mode!r}: only 'zeros' is supported "
                               "(as in torch's quantized conv)")
        c_in = _pos_int(in_channels, "in_channels")
        c_out = _pos_int(out_channels, "out_channels")
        k = _single(kernel_size, "kernel_size")
        s = _single(stride, "stride")
        d = _single(dilation, "dilation")
        g = _pos_int(groups, "groups")
        pl, pr = _padding(padding, k, d, s)
        self._padding_arg = padding
        self._init_geometry(c_in, c_out, k, s, pl, pr, d, g)
        self._has_bias_flag = bool(bias)
        self.scale, self.zero_point = 1.0, 0

    in_channels = property(lambda self: self._c_in)
    out_channels = property(lambda self: self._c_out)
    kernel_size = property(lambda self: (self._k,))
    stride = property(lambda self: (self._s,))
    padding = property(lambda self: (self._pl,) if self._pl == self._pr else (self._pl, self._pr))
    dilation = property(lambda self: (self._d,))
    groups = property(lambda self: self._g)

    def set_weight_bias(self, qweight, bias=None):
        """Validate and pack ``qweight`` (qint8 ``[C_out, C_in/groups, K]``) once."""
        self._set(qweight, bias, 3)

    def config(self) -> dict:
        c = self._base_config()
        c.update(in_channels=self._c_in, out_channels=self._c_out, kernel_size=self._k,
                 stride=self._s, padding=[self._pl, self._pr], dilation=self._d,
                 groups=self._g, scale=float(self.scale), zero_point=int(self.zero_point))
        return c

    @classmethod
    def from_packed(cls, config, arrays):
        """Build from ``config()`` / ``packed_arrays()`` output without copying (see module doc)."""
        if config.get("kind") != cls.__name__:
            raise ValueError(f"from_packed: config kind {config.get('kind')!r} is not "
                             f"{cls.__name__!r}")
        pad = config["padding"]
        m = cls(config["in_channels"], config["out_channels"], config["kernel_size"],
                config["stride"], tuple(pad), config["dilation"], config["groups"],
                config.get("has_bias", True))
        m._set_output_qparams(config["scale"], config["zero_point"])
        return m._load(config, arrays, (m._c_out, m._cg, m._k))

    def output_shape(self, input_shape):
        shp = tuple(int(v) for v in input_shape)
        if len(shp) not in (2, 3):
            raise ValueError(f"input must be [N, C_in, L] or [C_in, L], got shape {shp}")
        if shp[-2] != self._c_in:
            raise ValueError(f"input has {shp[-2]} channels, the layer expects {self._c_in}")
        if shp[-1] < 1:
            raise ValueError("input length must be >= 1 (torch's qnnpack refuses empty inputs)")
        lo = self._len_out(shp[-1])
        if lo < 1:
            raise ValueError(f"input length {shp[-1]} is too short: with kernel_size={self._k}, "
                             f"dilation={self._d}, padding=({self._pl}, {self._pr}) and "
                             f"stride={self._s} the output length would be {lo}")
        return shp[:-2] + (self._c_out, lo)

    def macs(self, input_shape):
        o = self.output_shape(input_shape)
        n = o[0] if len(o) == 3 else 1
        return n * self._c_out * o[-1] * self._cg * self._k

    def __call__(self, x, *, out=None):
        return self._call(x, out, out is not None)

    def _call(self, x, out, check_alias):
        """``__call__``; a model plan binds this with ``check_alias=False`` after checking its
        fixed buffers once (the arena planner never overlaps an op's input and output)."""
        try:
            key = (x._shape, x._strides, x._dtype, x._qscheme, x._scale, x._zero_point,
                   self.scale, self.zero_point, self._variant)
            plan, oshape = self._plans[key]
        except (AttributeError, KeyError, TypeError):
            plan, oshape = self._conv_plan(x)
        y = self._out_qtensor(out, oshape)
        if check_alias:  # the kernel reads input windows after writing outputs
            _check_out_alias(y, (x,), type(self).__name__, exact_ok=False)
        plan.run_u8(x._storage, x._offset, y._storage, y._offset)
        return y

    def _conv_plan(self, x):
        self._need_weight()
        _input_qtensor(x)
        oshape = self.output_shape(x.shape)
        xs, ys = x._strides, _contiguous_strides(oshape)
        if x.ndim == 2:
            x3, xs3, y3, ys3 = (1,) + x._shape, (0,) + xs, (1,) + oshape, (0,) + ys
        else:
            x3, xs3, y3, ys3 = x._shape, xs, oshape, ys
        plan = self._make_plan(x3, xs3, y3, ys3, x._scale, x._zero_point)
        key = (x._shape, x._strides, x._dtype, x._qscheme, x._scale, x._zero_point,
               self.scale, self.zero_point, self._variant)
        return self._remember(key, (plan, oshape))

    def extra_repr(self):
        return (f"{self._c_in}, {self._c_out}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
                f"groups={self._g}, scale={self.scale}, zero_point={self.zero_point}")

    def __repr__(self):
        return f"qrt.nn.{type(self).__name__}({self.extra_repr()})"


class ConvReLU1d(Conv1d):
    """Conv1d followed by relu, fused as torch's ``ConvReLU1d``: output clamped at zero_point."""

    _relu = True


# ---- conv2d -----------------------------------------------------------------------------------
def _pair(v, what, minimum=1):
    """int or 2-sequence -> (int, int) (torch's _pair)."""
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"{what} must be an int or a 2-element sequence, got {v!r}")
        return _pos_int(v[0], what, minimum), _pos_int(v[1], what, minimum)
    i = _pos_int(v, what, minimum)
    return i, i


def _padding2d(padding, kernel, dilation, stride):
    """(top, bottom, left, right) for an int / pair / 'valid' / 'same' (torch float conv's rule:
    'same' puts d*(k-1)//2 before, the rest after; stride 1 only)."""
    if isinstance(padding, str):
        if padding == "valid":
            return 0, 0, 0, 0
        if padding == "same":
            if stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions "
                                 f"(stride={stride}), as in torch")
            th, tw = dilation[0] * (kernel[0] - 1), dilation[1] * (kernel[1] - 1)
            return th // 2, th - th // 2, tw // 2, tw - tw // 2
        raise ValueError(f"padding must be an int, a pair, 'same' or 'valid', got {padding!r}")
    if isinstance(padding, (tuple, list)) and len(padding) == 4:
        return tuple(_pos_int(v, "padding", 0) for v in padding)
    ph, pw = _pair(padding, "padding", 0)
    return ph, ph, pw, pw


class Conv2d(_Base):
    """Quantized 2-d convolution (``torch.ao.nn.quantized.Conv2d``), qnnpack arithmetic.

    A conv1d over an im2col layout of the input (docs/architecture.md, "conv2d"): the same
    weights packing, requantization and kernels as :class:`Conv1d`, so both are one family.
    A 1x1 stride-1 unpadded convolution reads its input in place (a conv1d of kernel 1 over
    H*W positions); a depthwise one (groups == in_channels, any channel multiplier) runs the
    direct depthwise kernel (include/qrt/dwconv2d.h: no im2col, 3-7x faster); every other one
    is a grouped conv1d of kernel 1 over the im2col layout [N, C*kh*kw, Ho*Wo] (a GEMM per
    group).  Tests can run depthwise layers through that GEMM (``_dw_direct = False``) or as a
    conv1d of kernel kh*kw and stride kh*kw over [N, C, Ho*Wo*kh*kw] (``_dw_taps``): the same
    integers.
    Padded positions hold the input zero point, as qnnpack's zero buffer.

    Input ``[N, C_in, H, W]`` or unbatched ``[C_in, H, W]`` quint8 per-tensor QTensor, any
    strides.  Output ``[N, C_out, H_out, W_out]`` quint8 with ``scale``/``zero_point``.
    """

    _wshape_ndim = 4
    _dw_taps = False  # tests set True (on the class) to run depthwise as kernel kh*kw
    _dw_direct = True  # tests set False (on the class) to run depthwise as im2col + GEMM

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros"):
        if padding_mode != "zeros":
            raise UnsupportedError(f"padding_mode={padding_mode!r}: qrt.nn.Conv2d pads with the "
                               "zero point only (the exporter lowers torch's 'reflect' as a "
                               "pad op before the conv)")
        c_in = _pos_int(in_channels, "in_channels")
        c_out = _pos_int(out_channels, "out_channels")
        kh, kw = _pair(kernel_size, "kernel_size")
        s = _pair(stride, "stride")
        d = _pair(dilation, "dilation")
        g = _pos_int(groups, "groups")
        if c_in % g:
            raise ValueError(f"in_channels={c_in} must be divisible by groups={g}")
        pads = _padding2d(padding, (kh, kw), d, s)
        self._k2, self._s2, self._d2, self._pads = (kh, kw), s, d, pads
        cg, K = c_in // g, kh * kw
        if (kh, kw) == (1, 1) and s == (1, 1) and pads == (0, 0, 0, 0):
            mode, c1, k1 = "direct", c_in, 1
        elif cg == 1 and K > 1 and self._dw_taps:
            mode, c1, k1 = "dw", c_in, K
        else:  # depthwise too: its grouped kernel-1 conv1d is ~10x faster than kernel kh*kw
            mode, c1, k1 = "gemm", c_in * K, 1
        self._mode = mode
        self._init_geometry(c1, c_out, k1, k1, 0, 0, 1, g)
        self._c_in2, self._cg2 = c_in, cg
        self._has_bias_flag = bool(bias)
        self.scale, self.zero_point = 1.0, 0

    in_channels = property(lambda self: self._c_in2)
    out_channels = property(lambda self: self._c_out)
    kernel_size = property(lambda self: self._k2)
    stride = property(lambda self: self._s2)
    dilation = property(lambda self: self._d2)
    groups = property(lambda self: self._g)

    @property
    def padding(self):
        t, b, l_, r = self._pads
        return (t, l_) if (t, l_) == (b, r) else self._pads

    def _wshape(self):
        return (self._c_out, self._cg2) + self._k2

    def set_weight_bias(self, qweight, bias=None):
        """Validate and pack ``qweight`` (qint8 ``[C_out, C_in/groups, kh, kw]``) once."""
        ints, sc, zp, qs = _weight_parts(qweight, 4)
        if ints.shape != self._wshape():
            raise ValueError(f"weight has shape {qweight.shape}, expected {self._wshape()}")
        b = _bias_array(bias, self._c_out)
        w3 = ints.reshape(self._c_out, self._cg, self._k)
        wpack, wsum = _pack(w3, self._c_out, self._cg, self._k)
        self._adopt(w3, wpack, wsum, sc, zp, b, qs)

    def weight(self) -> QTensor:
        self._need_weight()
        from qrt._tensor import from_int_repr, from_int_repr_per_channel
        ints = self._w.reshape(self._wshape())
        if self._qscheme == "per_tensor_affine":
            return from_int_repr(ints, float(self._wscale[0]), int(self._wzp[0]), qint8)
        return from_int_repr_per_channel(ints, self._wscale, self._wzp.astype(np.int64), 0,
                                         qint8)

    def packed_arrays(self) -> dict:
        d = super().packed_arrays()
        d["weight"] = self._w.reshape(self._wshape())
        return d

    def output_hw(self, h, w):
        (kh, kw), (sh, sw), (dh, dw) = self._k2, self._s2, self._d2
        t, b, l_, r = self._pads
        return conv_out_len(h, kh, sh, t, b, dh), conv_out_len(w, kw, sw, l_, r, dw)

    def output_shape(self, input_shape):
        shp = tuple(int(v) for v in input_shape)
        if len(shp) not in (3, 4):
            raise ValueError(f"input must be [N, C_in, H, W] or [C_in, H, W], got shape {shp}")
        if shp[-3] != self._c_in2:
            raise ValueError(f"input has {shp[-3]} channels, the layer expects {self._c_in2}")
        if shp[-1] < 1 or shp[-2] < 1:
            raise ValueError(f"input height and width must be >= 1, got {shp[-2:]}")
        ho, wo = self.output_hw(shp[-2], shp[-1])
        if ho < 1 or wo < 1:
            raise ValueError(f"input {shp[-2]}x{shp[-1]} is too small: with kernel_size="
                             f"{self._k2}, dilation={self._d2}, padding={self._pads} and "
                             f"stride={self._s2} the output would be {ho}x{wo}")
        return shp[:-3] + (self._c_out, ho, wo)

    def macs(self, input_shape):
        o = self.output_shape(input_shape)
        n = o[0] if len(o) == 4 else 1
        return n * self._c_out * o[-1] * o[-2] * self._cg2 * self._k2[0] * self._k2[1]

    def __call__(self, x, *, out=None):
        return self._call(x, out, out is not None)

    def _call(self, x, out, check_alias):
        """``__call__``; a model plan binds this with ``check_alias=False`` (see Conv1d)."""
        try:
            key = (x._shape, x._strides, x._dtype, x._qscheme, x._scale, x._zero_point,
                   self.scale, self.zero_point, self._variant)
            entry = self._plans[key]
        except (AttributeError, KeyError, TypeError):
            entry = self._conv2d_plan(x)
        im, plan, oshape, cols = entry
        y = self._out_qtensor(out, oshape)
        if check_alias:
            _check_out_alias(y, (x,), type(self).__name__, exact_ok=False)
        if im is None:
            plan.run_u8(x._storage, x._offset, y._storage, y._offset)
            return y
        try:  # one column buffer per concurrent call (list pop/append are atomic)
            col = cols.pop()
        except IndexError:
            col = np.empty(max(im.size, 1), np.uint8)
        try:
            im.run(x._storage, x._offset, col)
            plan.run_u8(col, 0, y._storage, y._offset)
        finally:
            cols.append(col)
        return y

    def _conv2d_plan(self, x):
        self._need_weight()
        _input_qtensor(x)
        oshape = self.output_shape(x.shape)
        shp, st = x._shape, x._strides
        if x.ndim == 3:
            shp, st = (1,) + shp, (0,) + st
        n, c, h, w = shp
        ho, wo = oshape[-2:]
        L = ho * wo
        y3, ys3 = (n, self._c_out, L), (self._c_out * L, L, 1)
        im = None
        if self._cg2 == 1 and self._mode == "gemm" and self._dw_direct:
            plan = self._dw_plan((n, c, h, w), st, (ho, wo), x._scale, x._zero_point)
            key = (x._shape, x._strides, x._dtype, x._qscheme, x._scale, x._zero_point,
                   self.scale, self.zero_point, self._variant)
            return self._remember(key, (None, plan, oshape, []))
        if self._mode == "direct" and (h == 1 or st[2] == w * st[3]):
            x3, xs3 = (n, c, h * w), (st[0], st[1], st[3])
        else:
            dw = self._mode == "dw"
            t, _, l_, _ = self._pads
            im = _conv1d.Im2col((n, c, h, w), st, self._k2, self._s2, self._d2, (t, l_),
                                (ho, wo), x._zero_point,
                                _conv1d.IM2COL_C_PK if dw else _conv1d.IM2COL_CK_P)
            if dw:
                x3 = (n, c, L * self._k)
            else:
                x3 = (n, c * self._k2[0] * self._k2[1], L)
            xs3 = (x3[1] * x3[2], x3[2], 1)
        plan = self._make_plan(x3, xs3, y3, ys3, x._scale, x._zero_point)
        key = (x._shape, x._strides, x._dtype, x._qscheme, x._scale, x._zero_point,
               self.scale, self.zero_point, self._variant)
        return self._remember(key, (im, plan, oshape, []))

    def _dw_plan(self, x_shape, x_strides, out_hw, in_scale, in_zp):
        """The direct depthwise kernel's plan (include/qrt/dwconv2d.h) for this input."""
        _check_scale(self.scale, "scale")
        _check_zero_point(self.zero_point, quint8, "zero_point")
        bq, rs = self._requant(in_scale)
        oz = self.zero_point
        lo, hi = (oz if self._relu else 0), 255
        if self._clamp is not None:
            lo, hi = self._clamp
        t, _, l_, _ = self._pads
        return _conv1d.DwPlan(self._w.reshape(self._c_out, -1), self._wzp, bq, rs, x_shape,
                              x_strides, self._k2, self._s2, self._d2, (t, l_), out_hw,
                              input_zero=in_zp, output_zero=oz, output_min=lo, output_max=hi,
                              variant=self._variant)

    def extra_repr(self):
        return (f"{self._c_in2}, {self._c_out}, kernel_size={self._k2}, stride={self._s2}, "
                f"padding={self.padding}, dilation={self._d2}, groups={self._g}, "
                f"scale={self.scale}, zero_point={self.zero_point}")

    def __repr__(self):
        return f"qrt.nn.{type(self).__name__}({self.extra_repr()})"


class ConvReLU2d(Conv2d):
    """Conv2d followed by relu, fused as torch's ``ConvReLU2d``: output clamped at zero_point."""

    _relu = True


# ---- linear -----------------------------------------------------------------------------------
class Linear(_Base):
    """Quantized linear layer (``torch.ao.nn.quantized.Linear``), qnnpack arithmetic.

    Input ``[..., in_features]`` quint8 per-tensor QTensor (any strides; a 1-d input is accepted,
    torch requires >= 2-d), output ``[..., out_features]`` quint8.
    """

    _wshape_ndim = 2

    def __init__(self, in_features, out_features, bias=True):
        fi = _pos_int(in_features, "in_features")
        fo = _pos_int(out_features, "out_features")
        self._init_geometry(fi, fo, 1, 1, 0, 0, 1, 1)
        self._has_bias_flag = bool(bias)
        self.scale, self.zero_point = 1.0, 0

    in_features = property(lambda self: self._c_in)
    out_features = property(lambda self: self._c_out)

    def set_weight_bias(self, qweight, bias=None):
        """Validate and pack ``qweight`` (qint8 ``[out_features, in_features]``) once."""
        self._set(qweight, bias, 2)

    def config(self) -> dict:
        c = self._base_config()
        c.update(in_features=self._c_in, out_features=self._c_out)
        if not self._dynamic:
            c.update(scale=float(self.scale), zero_point=int(self.zero_point))
        return c

    @classmethod
    def from_packed(cls, config, arrays):
        """Build from ``config()`` / ``packed_arrays()`` output without copying (see module doc)."""
        if config.get("kind") != cls.__name__:
            raise ValueError(f"from_packed: config kind {config.get('kind')!r} is not "
                             f"{cls.__name__!r}")
        m = cls(config["in_features"], config["out_features"], config.get("has_bias", True))
        if not cls._dynamic:
            m._set_output_qparams(config["scale"], config["zero_point"])
        return m._load(config, arrays, (m._c_out, m._c_in))

    def output_shape(self, input_shape):
        shp = tuple(int(v) for v in input_shape)
        if len(shp) < 1 or shp[-1] != self._c_in:
            raise ValueError(f"input must be [..., {self._c_in}], got shape {shp}")
        return shp[:-1] + (self._c_out,)

    def macs(self, input_shape):
        shp = self.output_shape(input_shape)
        return int(np.prod(shp[:-1], dtype=np.int64)) * self._c_out * self._c_in

    @staticmethod
    def _rows_stride(shape, strides):
        """Element stride between rows when the leading dims collapse into one, else None."""
        lead = [(d, st) for d, st in zip(shape[:-1], strides[:-1]) if d != 1]
        if not lead or any(d == 0 for d, _ in lead):
            return 1
        for (d0, s0), (d1, s1) in zip(lead, lead[1:]):
            if s0 != s1 * d1:
                return None
        return lead[-1][1]

    def _linear_plan(self, x_shape, x_strides, in_scale, in_zp, rs=None):
        """(plan, out shape) for a [..., in] input; None plan when the rows do not collapse."""
        oshape = self.output_shape(x_shape)
        rows = 1
        for d in x_shape[:-1]:
            rows *= d
        rs_ = self._rows_stride(x_shape, x_strides)
        if rs_ is None:
            return None, oshape
        plan = self._make_plan((1, self._c_in, rows), (0, x_strides[-1], rs_),
                               (1, self._c_out, rows), (0, 1, self._c_out), in_scale, in_zp, rs)
        return plan, oshape

    def __call__(self, x, *, out=None):
        return self._call(x, out, out is not None)

    def _call(self, x, out, check_alias):
        """``__call__``; a model plan binds this with ``check_alias=False`` (see Conv1d)."""
        try:
            key = (x._shape, x._strides, x._dtype, x._qscheme, x._scale, x._zero_point,
                   self.scale, self.zero_point, self._variant)
            plan, oshape = self._plans[key]
        except (AttributeError, KeyError, TypeError):
            self._need_weight()
            _input_qtensor(x)
            if x.ndim < 1:
                raise ValueError("input must have at least one dimension")
            plan, oshape = self._linear_plan(x._shape, x._strides, x._scale, x._zero_point)
            if plan is not None:
                self._remember(key, (plan, oshape))
        y = self._out_qtensor(out, oshape)
        if check_alias:  # the kernel reads input windows after writing outputs
            _check_out_alias(y, (x,), type(self).__name__, exact_ok=False)
        if plan is None:  # leading dims that do not collapse: copy once, then run
            x = x.contiguous()  # (clone() keeps a channels-last layout, as torch's does)
            plan, _ = self._linear_plan(x._shape, x._strides, x._scale, x._zero_point)
        plan.run_u8(x._storage, x._offset, y._storage, y._offset)
        return y

    def __repr__(self):
        q = "" if self._dynamic else f", scale={self.scale}, zero_point={self.zero_point}"
        return (f"qrt.nn.{type(self).__name__}(in_features={self._c_in}, "
                f"out_features={self._c_out}{q})")


class LinearReLU(Linear):
    """Linear followed by relu, fused as torch's ``LinearReLU``: output clamped at zero_point."""

    _relu = True


class DynamicLinear(Linear):
    """Dynamically quantized linear (``torch.ao.nn.quantized.dynamic.Linear``), qnnpack engine.

    Each call quantizes the float32 input to quint8 with ``choose_qparams(min(x), max(x))``
    (torch's ChooseQuantizationParams; qnnpack ignores ``reduce_range``, and so does qrt) and
    torch's per-tensor quantize, then computes ``y = f32(f32(f32(acc) * f32(sw * f32(s))) + b)``
    in float32.  ``__call__(x, *, out=None)``: ``out`` is a float32 C-contiguous numpy array.
    """

    _dynamic = True

    def __init__(self, in_features, out_features, bias=True, reduce_range=False):
        super().__init__(in_features, out_features, bias)
        self.reduce_range = bool(reduce_range)
        del self.scale, self.zero_point

    def __call__(self, x, *, out=None):
        self._need_weight()
        xf = np.asarray(x)
        if xf.dtype.kind != "f":
            raise TypeError(f"input must be a float array, got dtype {xf.dtype}")
        xf = np.ascontiguousarray(xf, dtype=np.float32)
        oshape = self.output_shape(xf.shape)
        if out is None:
            y = np.empty(oshape, np.float32)
        else:
            if not isinstance(out, np.ndarray) or out.dtype != np.float32:
                raise TypeError("out must be a float32 numpy array")
            if out.shape != oshape or not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError(f"out must be a writeable C-contiguous array of shape {oshape}")
            y = out
        xq = np.empty(xf.shape, np.uint8)
        # One prepared plan per input shape; the per-call scale / zero point are written into
        # it.  The plan is taken out of the cache while in use, so concurrent calls never share.
        entry = self._plans.pop(xq.shape, None)
        if entry is None or entry[2] != self._variant:
            rs_buf = np.empty(self._c_out, np.float32)
            plan, _ = self._linear_plan(xq.shape, _contiguous_strides(xq.shape), 1.0, 0, rs_buf)
            entry = (plan, rs_buf, self._variant)
        plan, rs_buf, _ = entry
        if xf.size:
            # min / max, choose_qparams (qrt_choose_qparams_u8 == qrt.quantization's, tested),
            # quantize, rs = f32(sw * f32(s)) and the kernel in one C call
            if not plan.run_dynamic_f32(xf.reshape(-1), xq.reshape(-1), y.reshape(-1),
                                        self._wscale32, rs_buf):
                self._plans[xq.shape] = entry
                raise ValueError("input contains NaN or infinity; torch's dynamic quantization "
                                 "fails on it too")
        else:
            s, z = choose_qparams(0.0, 0.0, 0, 255, False)
            np.multiply(self._wscale32, np.float32(s), out=rs_buf)  # f32(sw * f32(s))
            plan.set_input_zero(z)
            plan.run_f32(xq.reshape(-1), 0, y.reshape(-1), 0)
        if len(self._plans) > 32:
            self._plans.clear()
        self._plans[xq.shape] = entry
        return y

    def bound_call(self, x, y):
        """A zero-argument call computing ``self(x, out=y)`` for these fixed arrays (a model
        plan's buffers, bound once): the checks, the plan, the quint8 buffer and the scale
        buffer are made here, so that a call is the one C call of ``run_dynamic_f32``.
        Arrays it cannot take that way (not float32 C-contiguous, empty, rows that do not
        collapse) get ``lambda: self(x, out=y)``."""
        self._need_weight()
        if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
                and x.dtype == np.float32 and x.flags.c_contiguous and x.size
                and y.dtype == np.float32 and y.flags.c_contiguous and y.flags.writeable
                and y.shape == self.output_shape(x.shape)):
            return lambda: self(x, out=y)
        xq = np.empty(x.shape, np.uint8)
        rs_buf = np.empty(self._c_out, np.float32)
        plan, _ = self._linear_plan(xq.shape, _contiguous_strides(xq.shape), 1.0, 0, rs_buf)
        if plan is None:
            return lambda: self(x, out=y)
        run, xf, xqf, yf, ws = plan.run_dynamic_f32, x.reshape(-1), xq.reshape(-1), \
            y.reshape(-1), self._wscale32

        def call():
            if not run(xf, xqf, yf, ws, rs_buf):
                raise ValueError("input contains NaN or infinity; torch's dynamic "
                                 "quantization fails on it too")
        return call
