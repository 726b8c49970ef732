# SPDX-License-Identifier: Apache-2.0
"""The CuPy backend: qrt's ops and models on an NVIDIA GPU, bit-exact with the CPU backend.

Imported only through :mod:`qrt.backends` (``qrt.load(path, device="cuda")`` or a device tensor
reaching ``qrt.functional``); importing it imports cupy.  The kernels are the CUDA C files in
``qrt/backends/cuda/``, compiled once per process by ``cupy.RawModule`` (NVRTC, ``--fmad=false``).
Their per-element arithmetic lives in ``qrt_cuda_math.cuh`` and is tested on the CPU against qrt's
C reference kernels (tests/test_cuda_math.py); see docs/gpu.md.
"""

from __future__ import annotations

import math
import os
from types import SimpleNamespace
from typing import Dict, Optional, Sequence, Tuple

import cupy as cp
import numpy as np

from qrt import backends as _registry
from qrt._tensor import QTensor, as_dtype, from_int_repr, qint8, quint8
from qrt._geometry import conv_out_len
from qrt.backends import _qparams as Q

__all__ = ["check_available", "DeviceQTensor", "to_device", "functional", "DeviceConv1d",
           "DeviceLinear", "DeviceModel", "load", "UnsupportedOnDevice"]

_BLOCK = 256
_MAX_GRID = 65535 * 8
_NVRTC_OPTIONS = ("--std=c++14", "--fmad=false")
_SOURCES = {  # kernel -> file
    "qrt_cu_conv1d": "qrt_conv1d.cu", "qrt_cu_conv1d_dot_dp4a": "qrt_conv1d.cu",
    "qrt_cu_quantize_f32_u8": "qrt_quant.cu", "qrt_cu_quantize_f32_s8": "qrt_quant.cu",
    "qrt_cu_dequantize_u8_f32": "qrt_quant.cu", "qrt_cu_dequantize_s8_f32": "qrt_quant.cu",
    "qrt_cu_relu_u8": "qrt_eltwise.cu", "qrt_cu_relu_s8": "qrt_eltwise.cu",
    "qrt_cu_add_u8": "qrt_eltwise.cu",
    "qrt_cu_max_pool1d_u8": "qrt_pool1d.cu", "qrt_cu_avg_pool1d_u8": "qrt_pool1d.cu",
    "qrt_cu_adaptive_avg_pool1d_u8": "qrt_pool1d.cu", "qrt_cu_lut_u8": "qrt_eltwise.cu",
    "qrt_cu_requant_copy_u8": "qrt_quant.cu", "qrt_cu_requant_copy_s8": "qrt_quant.cu",
}
_modules: Dict[Tuple[int, str], "cp.RawModule"] = {}


class UnsupportedOnDevice(ValueError):
    """An op or tensor layout the GPU backend has no kernel for (it never falls back)."""


def check_available() -> None:
    """Raise BackendUnavailable unless CuPy sees at least one CUDA GPU."""
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDARuntimeError: no driver, no device
        raise _registry.BackendUnavailable(
            f"device 'cuda' needs an NVIDIA GPU with a working driver; CuPy reports: {e}") from None
    if n < 1:
        raise _registry.BackendUnavailable("device 'cuda' needs an NVIDIA GPU; none is visible")


def _kernel(name: str):
    dev = cp.cuda.Device().id
    fname = _SOURCES[name]
    key = (dev, fname)
    mod = _modules.get(key)
    if mod is None:
        src_dir = _registry.cuda_source_dir()
        with open(os.path.join(src_dir, fname), encoding="utf-8") as f:
            code = f.read()
        mod = cp.RawModule(code=code, options=_NVRTC_OPTIONS + ("-I" + src_dir,))
        _modules[key] = mod
    return mod.get_function(name)


def _launch(name: str, work: int, args: tuple) -> None:
    if work <= 0:
        return
    grid = min((work + _BLOCK - 1) // _BLOCK, _MAX_GRID)
    _kernel(name)((grid,), (_BLOCK,), args)


# ---- device tensors ------------------------------------------------------------------------
class DeviceQTensor:
    """A per-tensor-affine quantized tensor whose integers live on the GPU (a CuPy array).

    The device twin of :class:`qrt.QTensor` with the accessors ops need: ``shape``, ``dtype``,
    ``q_scale()``, ``q_zero_point()``, ``int_repr()`` (the CuPy array, no copy), ``cpu()``.
    """

    _qrt_device = "cuda"  # what qrt.backends.is_device_tensor looks for (no cupy import there)
    __slots__ = ("_data", "_dtype", "_scale", "_zero_point")

    def __init__(self, data, scale: float, zero_point: int, dtype=None):
        arr = cp.ascontiguousarray(data)
        dt = as_dtype(dtype) if dtype is not None else \
            {np.dtype(np.uint8): quint8, np.dtype(np.int8): qint8}.get(arr.dtype)
        if dt is None or arr.dtype != dt.numpy_dtype or dt.itemsize != 1:
            raise TypeError(f"DeviceQTensor holds uint8 (quint8) or int8 (qint8) data, got "
                            f"{arr.dtype}")
        probe = QTensor(_empty_storage(), (0,), dt, scale, zero_point)  # validates qparams
        self._data, self._dtype = arr, dt
        self._scale, self._zero_point = probe.q_scale(), probe.q_zero_point()

    @classmethod
    def _wrap(cls, data, dtype, scale, zero_point):
        t = cls.__new__(cls)
        t._data, t._dtype, t._scale, t._zero_point = data, dtype, scale, zero_point
        return t

    shape = property(lambda self: tuple(self._data.shape))
    dtype = property(lambda self: self._dtype)
    ndim = property(lambda self: self._data.ndim)
    device = property(lambda self: f"cuda:{self._data.device.id}")

    def size(self, dim: Optional[int] = None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def q_scale(self) -> float:
        return self._scale

    def q_zero_point(self) -> int:
        return self._zero_point

    def int_repr(self):
        """The integers as a CuPy array (shares memory)."""
        return self._data

    def dequantize(self):
        """float32 values as a CuPy array, with torch's arithmetic (qrt.dequantize's)."""
        return functional.dequantize(self)

    def cpu(self) -> QTensor:
        """Copy to a host :class:`qrt.QTensor`."""
        return from_int_repr(cp.asnumpy(self._data), self._scale, self._zero_point, self._dtype)

    def reshape(self, *shape) -> "DeviceQTensor":
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return DeviceQTensor._wrap(self._data.reshape(shape), self._dtype, self._scale,
                                   self._zero_point)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "DeviceQTensor":
        shp = self.shape
        nd = max(len(shp), 1)
        s, e = start_dim % nd, end_dim % nd
        if not shp:
            return self.reshape((1,))
        return self.reshape(shp[:s] + (int(np.prod(shp[s:e + 1], dtype=np.int64)),) + shp[e + 1:])

    def __repr__(self):
        return (f"DeviceQTensor(shape={self.shape}, dtype={self._dtype!r}, "
                f"scale={self._scale!r}, zero_point={self._zero_point}, device={self.device!r})")


def _empty_storage():
    from qrt._storage import Storage
    return Storage.empty(0)


def to_device(q: QTensor) -> DeviceQTensor:
    """Copy a per-tensor quint8/qint8 :class:`qrt.QTensor` to the GPU."""
    if isinstance(q, DeviceQTensor):
        return q
    if not isinstance(q, QTensor):
        raise TypeError(f"to_device expects a qrt.QTensor, got {type(q).__name__}")
    if q.qscheme().name != "per_tensor_affine" or q.dtype.itemsize != 1:
        raise UnsupportedOnDevice("the GPU backend holds per-tensor quint8/qint8 activations; "
                                  f"got {q.qscheme().name} {q.dtype!r}")
    ints = np.ascontiguousarray(q.int_repr())
    return DeviceQTensor._wrap(cp.asarray(ints), q.dtype, q.q_scale(), q.q_zero_point())


def _as_device_q(x, what="input") -> DeviceQTensor:
    if isinstance(x, DeviceQTensor):
        return x
    raise TypeError(f"{what} must be a DeviceQTensor (use qrt.backends.cupy_backend.to_device), "
                    f"got {type(x).__name__}")


def _i64(values: Sequence[int]):
    return cp.asarray(np.asarray(values, dtype=np.int64))


# ---- prepared layers (weights copied to the device once) ----------------------------------------
def _weight_qparams(weight):
    """(int8 ndarray, float64 scales[oc], int64 zero_points[oc]) of a qint8 QTensor."""
    if not isinstance(weight, QTensor):
        raise TypeError(f"weight must be a qrt.QTensor (qint8), got {type(weight).__name__}")
    if weight.dtype is not qint8:
        raise TypeError(f"weight must be qint8, got {weight.dtype!r}")
    w = np.ascontiguousarray(weight.int_repr())
    oc = w.shape[0]
    if weight.qscheme().name == "per_channel_affine":
        if weight.q_per_channel_axis() != 0:
            raise ValueError("per-channel weights must be quantized along axis 0")
        return w, weight.q_per_channel_scales(), weight.q_per_channel_zero_points()
    return w, np.full(oc, weight.q_scale()), np.full(oc, weight.q_zero_point(), dtype=np.int64)


class DeviceConv1d:
    """A quantized conv1d (or, with ``linear=True``, a linear layer) resident on the GPU.

    Parameters are torch's; ``w_int8`` is ``[c_out][c_in/groups][kernel]`` (or ``[out][in]`` for
    a linear layer), ``w_scales``/``w_zero_points`` one per output channel, ``bias`` float32 or
    None; ``padding`` an int or ``[left, right]`` (qrt.nn's config).  The per-call constants
    (int32 bias, requantization scales) depend on the input and output scales and are cached.
    """

    def __init__(self, w_int8, w_scales, w_zero_points, bias=None, stride=1, padding=0,
                 dilation=1, groups=1, linear=False):
        w = np.ascontiguousarray(w_int8, dtype=np.int8)
        if linear:
            if w.ndim != 2:
                raise ValueError(f"linear weight must be 2-d [out][in], got shape {w.shape}")
            w = w.reshape(w.shape[0], w.shape[1], 1)
        if w.ndim != 3:
            raise ValueError(f"conv1d weight must be 3-d [c_out][c_in/groups][kernel], got "
                             f"shape {w.shape}")
        pads = list(padding) if isinstance(padding, (list, tuple)) else [padding, padding]
        if len(pads) == 1:
            pads = pads * 2
        if len(pads) != 2:
            raise ValueError(f"padding={padding!r} must be an int or [left, right]")
        self.pad_left, self.pad_right = (int(v) for v in pads)
        for name, v in (("stride", stride), ("dilation", dilation), ("groups", groups)):
            if int(v) < 1:
                raise ValueError(f"{name}={v} must be >= 1")
        if self.pad_left < 0 or self.pad_right < 0:
            raise ValueError(f"padding={padding!r} must be >= 0")
        self.c_out, self.cg, self.kernel = (int(d) for d in w.shape)
        self.stride, self.dilation, self.groups = int(stride), int(dilation), int(groups)
        self.linear = bool(linear)
        if self.c_out % self.groups:
            raise ValueError(f"groups={groups} must divide out_channels={self.c_out}")
        if self.cg * self.kernel > Q.MAX_TAPS:
            raise ValueError(f"(in_channels/groups)*kernel = {self.cg * self.kernel} exceeds "
                             f"{Q.MAX_TAPS}: the int32 accumulator could overflow")
        ws = np.asarray(w_scales, dtype=np.float64).reshape(-1)
        wz = np.asarray(w_zero_points, dtype=np.int64).reshape(-1)
        if ws.shape[0] != self.c_out or wz.shape[0] != self.c_out:
            raise ValueError("one weight scale and zero point per output channel is needed")
        if np.any(wz < -128) or np.any(wz > 127):
            raise ValueError("weight zero points must lie in [-128, 127]")
        self.w_scales = ws
        b = None if bias is None else np.asarray(bias, dtype=np.float32).reshape(-1)
        if b is not None and b.shape[0] != self.c_out:
            raise ValueError(f"bias has {b.shape[0]} entries, expected {self.c_out}")
        self.bias = b
        # Device copies, made once.
        self.d_w = cp.asarray(w)
        self.d_wzero = cp.asarray(wz.astype(np.int32))
        self.d_wsum = cp.asarray(w.reshape(self.c_out, -1).astype(np.int64).sum(1)
                                 .astype(np.int32))
        self.d_bias_f = cp.asarray(np.zeros(self.c_out, np.float32) if b is None else b)
        self._zero_i = cp.asarray(np.zeros(self.c_out, np.int32))
        self._consts: Dict[Tuple[float, float], tuple] = {}

    @classmethod
    def from_qtensor(cls, weight, bias=None, **kw):
        w, s, z = _weight_qparams(weight)
        return cls(w, s, z, bias, **kw)

    @classmethod
    def from_packed(cls, config, arrays):
        """From qrt.nn's model-loader contract (``config()`` / ``packed_arrays()``)."""
        kind = config.get("kind", "")
        linear = "Linear" in kind
        kw = {} if linear else dict(stride=config.get("stride", 1),
                                    padding=config.get("padding", 0),
                                    dilation=config.get("dilation", 1),
                                    groups=config.get("groups", 1))
        return cls(arrays["weight"], arrays["weight_scale"], arrays["weight_zero_point"],
                   arrays.get("bias") if config.get("has_bias") else None, linear=linear, **kw)

    def _constants(self, act_scale: float, out_scale: float):
        key = (float(act_scale), float(out_scale))
        c = self._consts.get(key)
        if c is None:
            rs = Q.conv_requant_scales(act_scale, self.w_scales, out_scale)
            bq = (np.zeros(self.c_out, np.int32) if self.bias is None
                  else Q.quantize_bias_qint32(self.bias, act_scale, self.w_scales))
            c = (cp.asarray(bq), cp.asarray(rs))
            if len(self._consts) > 16:
                self._consts.clear()
            self._consts[key] = c
        return c

    def _geometry(self, shape):
        if self.linear:
            if len(shape) < 1 or shape[-1] != self.cg:
                raise ValueError(f"linear input's last dimension must be {self.cg}, got {shape}")
            rows = int(np.prod(shape[:-1], dtype=np.int64))
            return rows, tuple(shape[:-1]) + (self.c_out,)
        if len(shape) != 3 or shape[1] != self.cg * self.groups:
            raise ValueError(f"conv1d input must be [N][{self.cg * self.groups}][L], got {shape}")
        lo = conv_out_len(shape[2], self.kernel, self.stride, self.pad_left, self.pad_right,
                          self.dilation)
        if lo <= 0:
            raise ValueError(f"conv1d input length {shape[2]} is too short for kernel "
                             f"{self.kernel}, dilation {self.dilation} and padding "
                             f"[{self.pad_left}, {self.pad_right}]")
        return lo, (shape[0], self.c_out, lo)

    def output_shape(self, shape):
        return self._geometry(tuple(shape))[1]

    out_shape = output_shape

    def __call__(self, x: DeviceQTensor, scale: float, zero_point: int, relu: bool = False,
                 out=None) -> DeviceQTensor:
        """quint8 output with qparams (scale, zero_point), fused relu when ``relu``."""
        x = _as_device_q(x)
        if x.dtype is not quint8:
            raise TypeError(f"conv1d/linear input must be quint8, got {x.dtype!r}")
        probe = QTensor(_empty_storage(), (0,), quint8, scale, zero_point)
        zp = probe.q_zero_point()
        if relu and zp == 255:
            raise UnsupportedOnDevice("a fused relu with output zero point 255 is refused")
        lo, oshape = self._geometry(x.shape)
        out = _out_array(out, oshape, cp.uint8)
        bq, rs = self._constants(x.q_scale(), probe.q_scale())
        self._run(x.int_repr(), x.shape, lo, x.q_zero_point(), bq, rs, self.d_bias_f, out,
                  Q_OUT_U8, zp, zp if relu else 0, 255)
        return DeviceQTensor._wrap(out, quint8, probe.q_scale(), zp)

    def dynamic(self, x, out=None):
        """Dynamic linear (qrt.nn.DynamicLinear, qnnpack): float32 in, float32 out."""
        from qrt.nn import choose_qparams
        if not self.linear:
            raise TypeError("dynamic quantization is for linear layers")
        xf = cp.ascontiguousarray(cp.asarray(x), dtype=cp.float32)
        rows, oshape = self._geometry(tuple(xf.shape))
        if xf.size:
            lo, hi = float(xf.min()), float(xf.max())  # one device sync, as the CPU's min/max
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise ValueError("input contains NaN or infinity; torch's dynamic quantization "
                                 "fails on it too")
        else:
            lo = hi = 0.0
        s, z = choose_qparams(lo, hi, 0, 255, False)
        xq = _quantize_per_tensor(xf, s, z, quint8)
        out = _out_array(out, oshape, cp.float32)
        scale = cp.asarray((self.w_scales.astype(np.float32) * np.float32(s)).astype(np.float32))
        self._run(xq.int_repr(), xf.shape, rows, z, self._zero_i, scale, self.d_bias_f, out,
                  Q_OUT_F32, 0, 0, 255)
        return out

    def _run(self, xd, shape, lo, xz, bq, rs, bf, out, kind, yz, ymin, ymax):
        if self.linear:
            rows = lo
            P = [1, self.cg, self.c_out, rows, rows, 1, 1, 1, 0, 1,
                 0, 1, self.cg, 0, 1, self.c_out, xz, yz, ymin, ymax, kind]
            _launch("qrt_cu_conv1d_dot_dp4a", rows * self.c_out,
                    (_i64(P), xd, self.d_w, self.d_wzero, bq, rs, bf, self.d_wsum, out))
            return
        n, c, L = shape
        P = [n, c, self.c_out, L, lo, self.kernel, self.stride, self.dilation, self.pad_left,
             self.groups, c * L, L, 1, self.c_out * lo, lo, 1, xz, yz, ymin, ymax, kind]
        _launch("qrt_cu_conv1d", n * self.c_out * lo,
                (_i64(P), xd, self.d_w, self.d_wzero, bq, rs, bf, out))


Q_OUT_U8, Q_OUT_F32 = 0, 1


def DeviceLinear(w_int8, w_scales, w_zero_points, bias=None):
    """A quantized linear layer on the GPU (a kernel-1 DeviceConv1d over rows, using __dp4a)."""
    return DeviceConv1d(w_int8, w_scales, w_zero_points, bias, linear=True)


def _out_array(out, shape, dtype):
    """A contiguous device array of `shape`/`dtype`: `out` (array or DeviceQTensor) or new."""
    if out is None:
        return cp.empty(shape, dtype=dtype)
    arr = out.int_repr() if isinstance(out, DeviceQTensor) else out
    if tuple(arr.shape) != tuple(shape) or arr.dtype != np.dtype(dtype) or \
            not arr.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {np.dtype(dtype)} device array of shape "
                         f"{tuple(shape)}")
    return arr


# ---- functional ops on device tensors (signatures of qrt.functional) ------------------------
def _quantize_per_tensor(x, scale, zero_point, dtype=quint8, *, out=None) -> DeviceQTensor:
    """float32 (CuPy or numpy) -> DeviceQTensor with torch's per-tensor formula (fmaf path)."""
    dt = as_dtype(dtype)
    if dt.itemsize != 1:
        raise UnsupportedOnDevice("the GPU backend quantizes to quint8/qint8 only")
    probe = QTensor(_empty_storage(), (0,), dt, scale, zero_point)
    xs = cp.ascontiguousarray(cp.asarray(x), dtype=cp.float32)
    o = _out_array(out, xs.shape, dt.numpy_dtype)
    inv = np.float32(1.0) / np.float32(probe.q_scale())
    name = "qrt_cu_quantize_f32_u8" if dt is quint8 else "qrt_cu_quantize_f32_s8"
    _launch(name, xs.size, (xs, np.int64(xs.size), np.float32(inv),
                            np.float32(probe.q_zero_point()), np.float32(dt.qmin),
                            np.float32(dt.qmax), o))
    return DeviceQTensor._wrap(o, dt, probe.q_scale(), probe.q_zero_point())


def _dequantize(q, *, out=None):
    q = _as_device_q(q)
    d = q.int_repr()
    out = _out_array(out, d.shape, cp.float32)
    name = "qrt_cu_dequantize_u8_f32" if q.dtype is quint8 else "qrt_cu_dequantize_s8_f32"
    _launch(name, d.size, (d, np.int64(d.size), np.float32(q.q_scale()),
                           np.int32(q.q_zero_point()), out))
    return out


def _relu(input, inplace=False, *, out=None):
    x = _as_device_q(input)
    d = x.int_repr()
    if inplace and out is not None:
        raise ValueError("relu: give either inplace=True or out, not both")
    o = d if inplace else _out_array(out, d.shape, d.dtype)
    name = "qrt_cu_relu_u8" if x.dtype is quint8 else "qrt_cu_relu_s8"
    _launch(name, d.size, (d, np.int64(d.size), np.int32(x.q_zero_point()), o))
    return DeviceQTensor._wrap(o, x.dtype, x.q_scale(), x.q_zero_point())


def _add_supported(a, b, scale, zero_point, relu) -> Optional[str]:
    """None when QNNPACK's fixed-point add applies (the only add with a GPU kernel), else why."""
    from qrt import _ops
    if a.dtype is not quint8 or b.dtype is not quint8:
        return "qint8 add (ATen's float kernel)"
    if tuple(a.shape) != tuple(b.shape) or len(a.shape) == 0:
        return f"broadcasting add of shapes {tuple(a.shape)} and {tuple(b.shape)}"
    F = np.float32
    if not _ops.add_qnnp_supported(F(a.q_scale()), a.q_zero_point(), F(b.q_scale()),
                                   b.q_zero_point(), F(scale), int(zero_point), bool(relu)):
        return "add with scale ratios or zero point QNNPACK refuses (ATen's float kernel)"
    return None


def _add_impl(a, b, scale, zero_point, relu, out=None):
    a, b = _as_device_q(a, "a"), _as_device_q(b, "b")
    probe = QTensor(_empty_storage(), (0,), quint8, scale, zero_point)
    so, zo = probe.q_scale(), probe.q_zero_point()
    why = _add_supported(a, b, so, zo, relu)
    if why is not None:
        raise UnsupportedOnDevice(f"{why} has no GPU kernel (the CPU runs it)")
    a_os = np.float32(np.float32(a.q_scale()) / np.float32(so))
    b_os = np.float32(np.float32(b.q_scale()) / np.float32(so))
    o = _out_array(out, a.shape, cp.uint8)
    n = a.numel()
    _launch("qrt_cu_add_u8", n, (a.int_repr(), b.int_repr(), np.int64(n),
                                 np.int32(a.q_zero_point()), np.int32(b.q_zero_point()),
                                 np.int32(zo), a_os, b_os, np.int32(zo if relu else 0),
                                 np.int32(255), o))
    return DeviceQTensor._wrap(o, quint8, so, zo)


def _add(a, b, scale, zero_point, *, out=None):
    return _add_impl(a, b, scale, zero_point, False, out)


def _add_relu(a, b, scale, zero_point, *, out=None):
    return _add_impl(a, b, scale, zero_point, True, out)


def _pool_checks(x, what):
    x = _as_device_q(x)
    if x.dtype is not quint8:
        raise UnsupportedOnDevice(f"{what} of {x.dtype!r} has no GPU kernel (quint8 only)")
    if x.ndim not in (2, 3) or x.shape[-1] < 1:
        raise ValueError(f"{what}: input must be [N, C, L] or [C, L], got shape {x.shape}")
    return x


def _max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, *,
                out=None):
    from qrt.functional._ops import _pool_geometry  # the CPU's validation and output length
    x = _pool_checks(input, "max_pool1d")
    k, s, p, d, lo = _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode)
    L = x.shape[-1]
    rows = x.numel() // L
    o = _out_array(out, x.shape[:-1] + (lo,), cp.uint8)
    _launch("qrt_cu_max_pool1d_u8", rows * lo, (_i64([rows, L, lo, k, s, d, p, 0, 0]),
                                                x.int_repr(), o))
    return DeviceQTensor._wrap(o, quint8, x.q_scale(), x.q_zero_point())


def _avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, *, out=None):
    from qrt.functional._ops import _pool_geometry
    x = _pool_checks(input, "avg_pool1d")
    k, s, p, _, lo = _pool_geometry(x, kernel_size, stride, padding, 1, ceil_mode)
    if not isinstance(count_include_pad, (bool, np.bool_)):
        raise TypeError("count_include_pad must be a bool")
    # The CPU's choice: QNNPACK's formula unless ceil_mode, kernel 1, or an ignored pad flag.
    qnnp = not ceil_mode and k > 1 and (count_include_pad or p == 0)
    L = x.shape[-1]
    rows = x.numel() // L
    o = _out_array(out, x.shape[:-1] + (lo,), cp.uint8)
    scale = Q.avg_pool_scale(x.q_scale(), k)
    P = [rows, L, lo, k, s, 1, p, 0 if qnnp else 1, 1 if count_include_pad else 0]
    _launch("qrt_cu_avg_pool1d_u8", rows * lo, (_i64(P), x.int_repr(),
                                                np.int32(x.q_zero_point()), scale, o))
    return DeviceQTensor._wrap(o, quint8, x.q_scale(), x.q_zero_point())


def _adaptive_avg_pool1d(input, output_size, *, out=None):
    from qrt.functional._ops import _int
    x = _pool_checks(input, "adaptive_avg_pool1d")
    o = _int(output_size, "output_size")
    if o < 1:
        raise ValueError(f"output_size must be >= 1, got {o}")
    L = x.shape[-1]
    if L % o == 0 and L != o:  # the CPU's choice: QNNPACK's average pooling, kernel = stride
        return _avg_pool1d(x, L // o, L // o, 0, out=out)
    rows = x.numel() // L
    res = _out_array(out, x.shape[:-1] + (o,), cp.uint8)
    _launch("qrt_cu_adaptive_avg_pool1d_u8", rows * o, (_i64([rows, L, o]), x.int_repr(), res))
    return DeviceQTensor._wrap(res, quint8, x.q_scale(), x.q_zero_point())


def _apply_luts(x, tables, single, dtype, scale, zp, out):
    """out = table[x] on the device, with the table(s) qrt's CPU code built."""
    d = x.int_repr()
    n = d.size
    from qrt.functional._ops import _ATEN_VEC_CODES
    t0 = cp.asarray(tables[0])
    t1 = t0 if single else cp.asarray(tables[1])
    nvec = n if single else n - n % _ATEN_VEC_CODES
    res = _out_array(out, d.shape, dtype.numpy_dtype)
    _launch("qrt_cu_lut_u8", n, (d.view(cp.uint8), np.int64(n), t0, t1, np.int64(nvec),
                                 res.view(cp.uint8)))
    return DeviceQTensor._wrap(res, dtype, scale, zp)


def _hardswish(input, scale, zero_point, *, out=None):
    from qrt import _ops
    x = _as_device_q(input)
    probe = QTensor(_empty_storage(), (0,), x.dtype, scale, zero_point)
    so, zo = probe.q_scale(), probe.q_zero_point()
    F = np.float32
    if x.dtype is quint8:
        t = np.empty(256, np.uint8)
        _ops.hardswish_lut(t, F(x.q_scale()), x.q_zero_point(), F(so), zo)
        return _apply_luts(x, (t,), True, quint8, so, zo, out)
    t = (np.empty(256, np.uint8), np.empty(256, np.uint8))
    _ops.hardswish_luts_aten(t[0], t[1], x.q_scale(), x.q_zero_point(), so, zo, True)
    return _apply_luts(x, t, False, qint8, so, zo, out)


def _sigmoid(input, *, out=None):
    from qrt import _ops
    x = _as_device_q(input)
    if x.dtype is quint8:
        t = np.empty(256, np.uint8)
        _ops.sigmoid_lut(t, np.float32(x.q_scale()), x.q_zero_point())
        return _apply_luts(x, (t,), True, quint8, 1.0 / 256.0, 0, out)
    t = (np.empty(256, np.uint8), np.empty(256, np.uint8))
    _ops.sigmoid_luts_aten(t[0], t[1], x.q_scale(), x.q_zero_point(), True)
    return _apply_luts(x, t, False, qint8, 1.0 / 256.0, -128, out)


def _cat(tensors, dim=0, scale=None, zero_point=None, *, out=None):
    """qrt.functional.cat on the GPU: every input requantized into the output's qparams."""
    from qrt.functional._ops import _int
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise TypeError("tensors must be a non-empty list or tuple of DeviceQTensors")
    xs = [_as_device_q(t, f"tensors[{i}]") for i, t in enumerate(tensors)]
    dt, nd = xs[0].dtype, xs[0].ndim
    if nd == 0:
        raise ValueError("cat: zero-dimensional tensors cannot be concatenated")
    d = _int(dim, "dim")
    if not -nd <= d < nd:
        raise ValueError(f"dim={d} is out of range for {nd}-d tensors")
    d %= nd
    for i, t in enumerate(xs[1:], 1):
        if t.dtype is not dt or t.ndim != nd or \
                t.shape[:d] + t.shape[d + 1:] != xs[0].shape[:d] + xs[0].shape[d + 1:]:
            raise ValueError(f"tensors[{i}] ({t.dtype!r}, {t.shape}) does not match tensors[0] "
                             f"({dt!r}, {xs[0].shape}) outside dim {d}")
    probe = QTensor(_empty_storage(), (0,), dt,
                    xs[0].q_scale() if scale is None else scale,
                    xs[0].q_zero_point() if zero_point is None else zero_point)
    so, zo = probe.q_scale(), probe.q_zero_point()
    shape = list(xs[0].shape)
    shape[d] = sum(t.shape[d] for t in xs)
    res = _out_array(out, tuple(shape), dt.numpy_dtype)
    outer = int(np.prod(shape[:d], dtype=np.int64))
    inner = int(np.prod(shape[d + 1:], dtype=np.int64))
    row = shape[d] * inner
    name = "qrt_cu_requant_copy_u8" if dt is quint8 else "qrt_cu_requant_copy_s8"
    F = np.float32
    inv = F(F(1.0) / F(so))
    off = 0
    for t in xs:
        n = t.shape[d] * inner
        if n and outer:
            _launch(name, outer * n, (t.int_repr(), np.int64(outer), np.int64(n),
                                      F(t.q_scale()), np.int32(t.q_zero_point()), inv, F(zo),
                                      F(dt.qmin), F(dt.qmax), res, np.int64(off),
                                      np.int64(row)))
        off += n
    return DeviceQTensor._wrap(res, dt, so, zo)


def _flatten(input, start_dim=0, end_dim=-1):
    return _as_device_q(input).flatten(start_dim, end_dim)


def _reshape(input, shape):
    return _as_device_q(input).reshape(shape)


def _int_arg(v, name, lo=None):
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise ValueError(f"{name} must be an int or a 1-element sequence, got {v!r}")
        v = v[0]
    try:
        i = int(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an integer, got {v!r}") from None
    if lo is not None and i < lo:
        raise ValueError(f"{name}={i} must be >= {lo}")
    return i


def _conv_common(input, weight, bias, stride, padding, dilation, groups, padding_mode, scale,
                 zero_point, relu, out):
    if padding_mode != "zeros":
        raise UnsupportedOnDevice(f"conv1d padding_mode={padding_mode!r}: only 'zeros'")
    layer = weight if isinstance(weight, DeviceConv1d) else DeviceConv1d.from_qtensor(
        weight, bias, stride=_int_arg(stride, "stride", 1), padding=padding,
        dilation=_int_arg(dilation, "dilation", 1), groups=_int_arg(groups, "groups", 1))
    return layer(input, scale, zero_point, relu=relu, out=out)


def _conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
            padding_mode="zeros", scale=1.0, zero_point=0, dtype=quint8, *, out=None):
    """qrt.functional.conv1d on the GPU (weights copied per call unless ``weight`` is a prepared
    :class:`DeviceConv1d`)."""
    if as_dtype(dtype) is not quint8:
        raise TypeError("conv1d output dtype must be quint8")
    return _conv_common(input, weight, bias, stride, padding, dilation, groups, padding_mode,
                        scale, zero_point, False, out)


def _conv1d_relu(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode="zeros", scale=1.0, zero_point=0, dtype=quint8, *, out=None):
    if as_dtype(dtype) is not quint8:
        raise TypeError("conv1d output dtype must be quint8")
    return _conv_common(input, weight, bias, stride, padding, dilation, groups, padding_mode,
                        scale, zero_point, True, out)


def _linear_layer(weight, bias):
    return weight if isinstance(weight, DeviceConv1d) else \
        DeviceConv1d.from_qtensor(weight, bias, linear=True)


def _linear(input, weight, bias=None, scale=1.0, zero_point=0, *, out=None):
    """qrt.functional.linear on the GPU."""
    return _linear_layer(weight, bias)(input, scale, zero_point, out=out)


def _linear_relu(input, weight, bias=None, scale=1.0, zero_point=0, *, out=None):
    return _linear_layer(weight, bias)(input, scale, zero_point, relu=True, out=out)


def _linear_dynamic(x_float, weight, bias=None, reduce_range=False, *, out=None):
    """qrt.functional.linear_dynamic on the GPU (qnnpack: reduce_range is ignored)."""
    return _linear_layer(weight, bias).dynamic(x_float, out=out)


#: The device implementations of qrt.functional ops, by name (used by qrt.backends.device_dispatch).
functional = SimpleNamespace(
    conv1d=_conv1d, conv1d_relu=_conv1d_relu, linear=_linear, linear_relu=_linear_relu,
    linear_dynamic=_linear_dynamic, relu=_relu, add=_add, add_relu=_add_relu,
    max_pool1d=_max_pool1d, avg_pool1d=_avg_pool1d, adaptive_avg_pool1d=_adaptive_avg_pool1d,
    hardswish=_hardswish, sigmoid=_sigmoid, cat=_cat, flatten=_flatten, reshape=_reshape,
    quantize_per_tensor=_quantize_per_tensor, dequantize=_dequantize,
)


# ---- models: the shared executor (qrt/executor.py) over this backend --------------------------
_ALIGN = 256
quantize_per_tensor = _quantize_per_tensor
dequantize = _dequantize


def require_q(node, entry, dtypes=("quint8",)):
    """UnsupportedOnDevice unless ``entry`` is a per-tensor tensor of one of ``dtypes``."""
    if entry.qscheme != "per_tensor_affine" or entry.dtype not in dtypes:
        raise UnsupportedOnDevice(f"op {node.index} {node.kind!r} ({node.name}): tensor "
                                  f"{entry.name!r} is {entry.dtype} {entry.qscheme}; the GPU "
                                  f"kernel needs per-tensor {'/'.join(dtypes)}")


def require_add(node, ins, scale, zero_point, relu):
    for e in list(ins) + list(node.outputs):
        require_q(node, e)
    probe = [DeviceQTensor._wrap(np.zeros(1), as_dtype(e.dtype), e.scale, e.zero_point)
             for e in ins]
    why = _add_supported(probe[0], probe[1], scale, zero_point, relu)
    if why is not None:  # decided at load from the qparams
        raise UnsupportedOnDevice(f"op {node.index} {node.kind!r} ({node.name}): {why} has no "
                                  "GPU kernel")


def layer_from_node(node, opdef):
    """A DeviceConv1d from a conv1d / linear / linear_dynamic node's raw weights."""
    what = f"op {node.index} {node.kind!r} ({node.name})"
    linear = opdef.name != "conv1d"
    a = node.attrs
    if a.get("activation", "none") not in ("none", "relu"):
        raise UnsupportedOnDevice(f"{what}: fused {a['activation']} has no GPU kernel")
    if opdef.name != "linear_dynamic":
        require_q(node, node.inputs[0])
        require_q(node, node.outputs[0])
        if a.get("activation") == "relu" and node.outputs[0].zero_point == 255:
            raise UnsupportedOnDevice(f"{what}: fused relu with zero point 255")
    kw = {} if linear else dict(stride=a["stride"], padding=a["padding"],
                                dilation=a["dilation"], groups=a["groups"])
    try:
        layer = DeviceConv1d(node.array("weight"), node.array("weight_scale"),
                             node.array("weight_zero_point"), node.array("bias"),
                             linear=linear, **kw)
    except (KeyError, ValueError, TypeError) as e:
        raise UnsupportedOnDevice(f"{what}: cannot build the GPU layer ({e})") from None
    node.cuda_state = layer
    return layer


class CupyBackend:
    """The executor's GPU backend: one CuPy arena, device views, each op's ``bind_cuda``."""

    name = "cupy"

    def __init__(self, device_index: int):
        self.device_index = device_index

    def supports(self, node):
        from qrt.ops import OpDef
        if type(node.op).prepare_cuda is OpDef.prepare_cuda:
            return "no GPU kernel"
        return None

    @staticmethod
    def unsupported(missing):
        raise UnsupportedOnDevice(
            "this model cannot run on device 'cuda': no GPU kernel for " + ", ".join(
                f"op {n.index} {n.kind!r} ({n.name})" for n, _ in missing)
            + ". Load it on the CPU (qrt.load(path)).")

    def prepare(self, node):
        import sys
        with cp.cuda.Device(self.device_index):
            node.cuda_ready = node.op.prepare_cuda(node, sys.modules[__name__])

    @staticmethod
    def alloc(nbytes, zero=False):
        return cp.zeros(nbytes, dtype=cp.uint8) if zero else cp.empty(nbytes, dtype=cp.uint8)

    @staticmethod
    def view(arena, offset, e, shape):
        nb = int(np.prod(shape, dtype=np.int64)) * e.np_dtype.itemsize
        arr = arena[offset:offset + nb].view(e.np_dtype).reshape(shape)
        if e.qscheme == "per_tensor_affine":
            return DeviceQTensor._wrap(arr, as_dtype(e.dtype), e.scale, e.zero_point)
        return arr

    def bind(self, node, ins, outs):
        import sys
        fn = node.op.bind_cuda(node, ins, outs, sys.modules[__name__])
        return None if fn is None else (fn, (), {})

    @staticmethod
    def input_view(v):
        return v.int_repr() if isinstance(v, DeviceQTensor) else v

    @staticmethod
    def fill_neutral(plan, entries):
        for e, v in zip(entries, plan.in_views):
            v[...] = e.zero_point if e.qscheme == "per_tensor_affine" else 0

    @staticmethod
    def reset_state(plan):
        for st in plan.state_buffers.values():
            st[...] = 0


class DeviceModel:
    """A qrt model (the blob format of qrt._format) run on the GPU by the shared executor.

    Weights are copied to the device once, here; activations live in one device arena per input
    shape (the executor's planner places them by lifetime, as on the CPU), reused across
    calls.  Ops without a GPU kernel make the constructor raise :class:`UnsupportedOnDevice`.
    """

    def __init__(self, blob, device_index: int = 0):
        from qrt.executor import Executor, Graph
        self.blob = blob
        self.device_index = int(device_index)
        self._t = blob.tensors
        graph = Graph(blob)
        # the file rules qrt.Model applies before allocating: R22 (shapes), R27 (memory bound)
        shapes = graph.check_exported_shapes()
        self._exec = Executor(graph, CupyBackend(self.device_index))
        self._exec.arena_limit_check(shapes, sum(t.nbytes for t in self._t
                                                 if t.kind == "constant"))
        self._exec.prepare()
        self.graph = graph

    def _input_array(self, i, x):
        e = self._t[i]
        if isinstance(x, DeviceQTensor):
            if (x.q_scale(), x.q_zero_point()) != (e.scale, e.zero_point):
                raise ValueError(f"input {e.name!r}: qparams differ from the model's")
            x = x.int_repr()
        elif isinstance(x, QTensor):
            if e.qscheme != "per_tensor_affine" or \
                    (x.q_scale(), x.q_zero_point()) != (e.scale, e.zero_point):
                raise ValueError(f"input {e.name!r}: QTensor qparams differ from the model's "
                                 f"({e.scale}, {e.zero_point})")
            x = np.ascontiguousarray(x.int_repr())
        arr = cp.ascontiguousarray(cp.asarray(x))
        if arr.dtype != e.np_dtype:
            raise TypeError(f"input {e.name!r} must be {e.np_dtype}, got {arr.dtype}")
        if arr.ndim != len(e.shape) or (e.batched and arr.shape[0] < 1):
            raise ValueError(f"input {e.name!r} has shape {tuple(arr.shape)}, expected "
                             f"{('N',) + tuple(e.shape[1:]) if e.batched else e.shape}")
        return arr

    def __call__(self, *inputs, as_cupy: bool = False):
        """Run the model.  Inputs as for the CPU model (float32 arrays, numpy or CuPy; or
        QTensors).  Float outputs come back as numpy arrays, quantized ones as qrt.QTensor;
        with ``as_cupy=True`` as CuPy arrays / DeviceQTensors.  A tuple when there are several."""
        ids = self.blob.inputs
        if len(inputs) != len(ids):
            raise TypeError(f"the model takes {len(ids)} input(s), got {len(inputs)}")
        with cp.cuda.Device(self.device_index):
            arrs = [self._input_array(i, x) for i, x in zip(ids, inputs)]
            plan = self._exec.plan([tuple(a.shape) for a in arrs])

            def copy_in(dst, a):
                dst[...] = a

            def copy_out(v):
                r = v.int_repr().copy() if isinstance(v, DeviceQTensor) else v.copy()
                if isinstance(v, DeviceQTensor):
                    r = DeviceQTensor._wrap(r, v.dtype, v.q_scale(), v.q_zero_point())
                    return r if as_cupy else r.cpu()
                return r if as_cupy else cp.asnumpy(r)
            outs = self._exec.run(plan, arrs, copy_in, copy_out)
        return outs[0] if len(outs) == 1 else tuple(outs)

    run = __call__


def load(path, device_index: int = 0, verify: bool = True, mmap: bool = True,
         **_ignored) -> DeviceModel:
    """Read and validate a ``.bin`` blob (qrt._format.reader) and lower it to the GPU."""
    from qrt._format.reader import read_blob
    return DeviceModel(read_blob(path, verify=verify, mmap=mmap), device_index)
