# SPDX-License-Identifier: Apache-2.0
"""The CuPy backend: qrt's ops and models on an NVIDIA GPU, bit-exact with the CPU backend.

Imported only through :mod:`qrt.backends` (``qrt.load(path, device="cuda")`` or a device tensor
reaching ``qrt.functional``); importing it imports cupy.  The kernels are the CUDA C files in
``qrt/backends/cuda/``, compiled once per process by ``cupy.RawModule`` (NVRTC, ``--fmad=false``).
Their per-element arithmetic lives in ``qrt_cuda_math.cuh`` and is tested on the CPU against qrt's
C reference kernels (tests/test_cuda_math.py); see docs/gpu.md.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Dict, Optional, Sequence, Tuple

import cupy as cp
import numpy as np

from qrt import backends as _registry
from qrt._tensor import QTensor, as_dtype, from_int_repr, qint8, quint8
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
    None.  The per-call constants (int32 bias, requantization scales) depend on the input and
    output scales and are cached per (input scale, output scale).
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
        for name, v in (("stride", stride), ("dilation", dilation), ("groups", groups)):
            if int(v) < 1:
                raise ValueError(f"{name}={v} must be >= 1")
        if int(padding) < 0:
            raise ValueError(f"padding={padding} must be >= 0")
        self.c_out, self.cg, self.kernel = (int(d) for d in w.shape)
        self.stride, self.padding = int(stride), int(padding)
        self.dilation, self.groups = int(dilation), int(groups)
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
        self._consts: Dict[Tuple[float, float], tuple] = {}
        self._zero_f = cp.zeros(self.c_out, dtype=cp.float32)

    @classmethod
    def from_qtensor(cls, weight, bias=None, **kw):
        w, s, z = _weight_qparams(weight)
        return cls(w, s, z, bias, **kw)

    def _constants(self, act_scale: float, out_scale: float):
        key = (float(act_scale), float(out_scale))
        c = self._consts.get(key)
        if c is None:
            rs = Q.conv_requant_scales(act_scale, self.w_scales, out_scale)
            bq = (np.zeros(self.c_out, np.int32) if self.bias is None
                  else Q.quantize_bias_qint32(self.bias, act_scale, self.w_scales))
            c = (cp.asarray(bq), cp.asarray(rs))
            self._consts[key] = c
        return c

    def _geometry(self, shape):
        if self.linear:
            if len(shape) < 1 or shape[-1] != self.cg:
                raise ValueError(f"linear input's last dimension must be {self.cg}, got {shape}")
            rows = int(np.prod(shape[:-1], dtype=np.int64))
            return rows, shape[:-1] + (self.c_out,)
        if len(shape) != 3 or shape[1] != self.cg * self.groups:
            raise ValueError(f"conv1d input must be [N][{self.cg * self.groups}][L], got {shape}")
        lo = Q.conv1d_len_out(shape[2], self.kernel, self.stride, self.padding, self.dilation)
        if lo <= 0:
            raise ValueError(f"conv1d input length {shape[2]} is too short for kernel "
                             f"{self.kernel}, dilation {self.dilation}, padding {self.padding}")
        return lo, (shape[0], self.c_out, lo)

    def out_shape(self, shape):
        return self._geometry(tuple(shape))[1]

    def __call__(self, x: DeviceQTensor, scale: float, zero_point: int, relu: bool = False,
                 out=None) -> DeviceQTensor:
        """quint8 output with qparams (scale, zero_point), fused relu when ``relu``."""
        x = _as_device_q(x)
        if x.dtype is not quint8:
            raise TypeError(f"conv1d/linear input must be quint8, got {x.dtype!r}")
        zp = int(zero_point)
        if not 0 <= zp <= 255:
            raise ValueError(f"zero_point={zp} is outside [0, 255]")
        shape = x.shape
        lo, oshape = self._geometry(shape)
        if out is None:
            out = cp.empty(oshape, dtype=cp.uint8)
        bq, rs = self._constants(x.q_scale(), scale)
        self._run(x.int_repr(), shape, lo, x.q_zero_point(), bq, rs, self._zero_f, out,
                  Q_OUT_U8, zp, zp if relu else 0, 255)
        return DeviceQTensor._wrap(out, quint8, float(scale), zp)

    def _run(self, xd, shape, lo, xz, bq, rs, bf, out, kind, yz, ymin, ymax):
        if self.linear:
            rows = lo
            P = [1, self.cg, self.c_out, rows, rows, 1, 1, 1, 0, 1,
                 0, 1, self.cg, 0, 1, self.c_out, xz, yz, ymin, ymax, kind]
            _launch("qrt_cu_conv1d_dot_dp4a", rows * self.c_out,
                    (_i64(P), xd, self.d_w, self.d_wzero, bq, rs, bf, self.d_wsum, out))
            return
        n, c, L = shape
        P = [n, c, self.c_out, L, lo, self.kernel, self.stride, self.dilation, self.padding,
             self.groups, c * L, L, 1, self.c_out * lo, lo, 1, xz, yz, ymin, ymax, kind]
        _launch("qrt_cu_conv1d", n * self.c_out * lo,
                (_i64(P), xd, self.d_w, self.d_wzero, bq, rs, bf, out))


Q_OUT_U8, Q_OUT_F32 = 0, 1


def DeviceLinear(w_int8, w_scales, w_zero_points, bias=None):
    """A quantized linear layer on the GPU (a kernel-1 DeviceConv1d over rows, using __dp4a)."""
    return DeviceConv1d(w_int8, w_scales, w_zero_points, bias, linear=True)


# ---- functional ops on device tensors --------------------------------------------------------
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


def _quantize_per_tensor(x, scale, zero_point, dtype=quint8) -> DeviceQTensor:
    """float32 (CuPy or numpy) -> DeviceQTensor with torch's per-tensor formula (fmaf path)."""
    dt = as_dtype(dtype)
    if dt.itemsize != 1:
        raise UnsupportedOnDevice("the GPU backend quantizes to quint8/qint8 only")
    probe = QTensor(_empty_storage(), (0,), dt, scale, zero_point)
    xs = cp.ascontiguousarray(cp.asarray(x), dtype=cp.float32)
    out = cp.empty(xs.shape, dtype=dt.numpy_dtype)
    inv = np.float32(1.0) / np.float32(probe.q_scale())
    name = "qrt_cu_quantize_f32_u8" if dt is quint8 else "qrt_cu_quantize_f32_s8"
    _launch(name, xs.size, (xs, np.int64(xs.size), np.float32(inv),
                            np.float32(probe.q_zero_point()), np.float32(dt.qmin),
                            np.float32(dt.qmax), out))
    return DeviceQTensor._wrap(out, dt, probe.q_scale(), probe.q_zero_point())


def _dequantize(q, out=None):
    q = _as_device_q(q)
    d = q.int_repr()
    if out is None:
        out = cp.empty(d.shape, dtype=cp.float32)
    name = "qrt_cu_dequantize_u8_f32" if q.dtype is quint8 else "qrt_cu_dequantize_s8_f32"
    _launch(name, d.size, (d, np.int64(d.size), np.float32(q.q_scale()),
                           np.int32(q.q_zero_point()), out))
    return out


def _relu(input, inplace=False):
    x = _as_device_q(input)
    d = x.int_repr()
    out = d if inplace else cp.empty_like(d)
    name = "qrt_cu_relu_u8" if x.dtype is quint8 else "qrt_cu_relu_s8"
    _launch(name, d.size, (d, np.int64(d.size), np.int32(x.q_zero_point()), out))
    return DeviceQTensor._wrap(out, x.dtype, x.q_scale(), x.q_zero_point())


def _add_impl(a, b, scale, zero_point, relu, out=None):
    a, b = _as_device_q(a, "a"), _as_device_q(b, "b")
    if a.dtype is not quint8 or b.dtype is not quint8:
        raise TypeError("add: both inputs must be quint8")
    if a.shape != b.shape:
        raise UnsupportedOnDevice(f"add: shapes {a.shape} and {b.shape} differ (the GPU "
                                  "kernel does not broadcast)")
    zp = _int_arg(zero_point, "zero_point")
    if not 0 <= zp <= 255:
        raise ValueError(f"zero_point={zp} is outside [0, 255]")
    if relu and zp == 255:
        raise ValueError("add_relu: QNNPACK rejects an output zero point of 255")
    a_os, b_os = Q.add_scale_ratios(a.q_scale(), b.q_scale(), scale)
    if out is None:
        out = cp.empty(a.shape, dtype=cp.uint8)
    n = a.numel()
    _launch("qrt_cu_add_u8", n, (a.int_repr(), b.int_repr(), np.int64(n),
                                 np.int32(a.q_zero_point()), np.int32(b.q_zero_point()),
                                 np.int32(zp), a_os, b_os, np.int32(zp if relu else 0),
                                 np.int32(255), out))
    probe = QTensor(_empty_storage(), (0,), quint8, scale, zp)
    return DeviceQTensor._wrap(out, quint8, probe.q_scale(), zp)


def _add(a, b, scale, zero_point):
    return _add_impl(a, b, scale, zero_point, False)


def _add_relu(a, b, scale, zero_point):
    return _add_impl(a, b, scale, zero_point, True)


def _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode):
    k = _int_arg(kernel_size, "kernel_size", 1)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else _int_arg(stride, "stride", 1)
    p = _int_arg(padding, "padding", 0)
    d = _int_arg(dilation, "dilation", 1)
    if k == 1:
        raise UnsupportedOnDevice("QNNPACK (qrt's oracle) rejects kernel_size=1 pooling")
    if p > k // 2:
        raise ValueError(f"padding={p} must be at most half of kernel_size={k}")
    if x.dtype is not quint8 or x.ndim not in (2, 3):
        raise TypeError("pool1d input must be a quint8 [C][L] or [N][C][L] tensor")
    L = x.shape[-1]
    lo = Q.pool1d_len_out(L, k, s, p, d, bool(ceil_mode))
    if lo <= 0:
        raise ValueError(f"pool1d input length {L} is too short")
    rows = x.numel() // L
    return k, s, p, d, L, lo, rows


def _max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False, out=None):
    if return_indices:
        raise UnsupportedOnDevice("max_pool1d with return_indices is not supported")
    x = _as_device_q(input)
    k, s, p, d, L, lo, rows = _pool_geometry(x, kernel_size, stride, padding, dilation,
                                             ceil_mode)
    if out is None:
        out = cp.empty(x.shape[:-1] + (lo,), dtype=cp.uint8)
    clamp = 0 if ceil_mode else 1  # torch runs QNNPACK (edge clamp) only without ceil_mode
    _launch("qrt_cu_max_pool1d_u8", rows * lo, (_i64([rows, L, lo, k, s, d, p, clamp]),
                                                x.int_repr(), out))
    return DeviceQTensor._wrap(out, quint8, x.q_scale(), x.q_zero_point())


def _avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None, out=None):
    # QNNPACK ignores count_include_pad (it always divides by kernel_size): so does qrt.
    if divisor_override is not None:
        raise UnsupportedOnDevice("avg_pool1d with divisor_override is not supported")
    if ceil_mode:
        raise UnsupportedOnDevice("avg_pool1d with ceil_mode=True is not supported on the GPU "
                                  "(torch leaves QNNPACK for ATen's generic kernel there)")
    x = _as_device_q(input)
    k, s, p, d, L, lo, rows = _pool_geometry(x, kernel_size, stride, padding, 1, ceil_mode)
    if out is None:
        out = cp.empty(x.shape[:-1] + (lo,), dtype=cp.uint8)
    scale = Q.avg_pool_scale(x.q_scale(), x.q_scale(), k)
    _launch("qrt_cu_avg_pool1d_u8", rows * lo, (_i64([rows, L, lo, k, s, 1, p, 1]), x.int_repr(),
                                                np.int32(x.q_zero_point()), scale, out))
    return DeviceQTensor._wrap(out, quint8, x.q_scale(), x.q_zero_point())


def _conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
            padding_mode="zeros", scale=1.0, zero_point=0, dtype=quint8):
    """torch.ao.nn.quantized.functional.conv1d on the GPU (weights copied per call; prepare a
    :class:`DeviceConv1d` once to avoid that)."""
    if padding_mode != "zeros":
        raise UnsupportedOnDevice(f"conv1d padding_mode={padding_mode!r}: only 'zeros'")
    if as_dtype(dtype) is not quint8:
        raise TypeError("conv1d output dtype must be quint8")
    layer = weight if isinstance(weight, DeviceConv1d) else DeviceConv1d.from_qtensor(
        weight, bias, stride=_int_arg(stride, "stride", 1),
        padding=_int_arg(padding, "padding", 0), dilation=_int_arg(dilation, "dilation", 1),
        groups=_int_arg(groups, "groups", 1))
    return layer(input, scale, zero_point)


def _linear(input, weight, bias=None, scale=None, zero_point=None):
    """torch.ao.nn.quantized.functional.linear on the GPU."""
    if scale is None or zero_point is None:
        raise ValueError("linear: scale and zero_point of the output are required")
    layer = weight if isinstance(weight, DeviceConv1d) else \
        DeviceConv1d.from_qtensor(weight, bias, linear=True)
    return layer(input, scale, zero_point)


#: The device implementations of qrt.functional ops, by name (used by qrt.backends.device_dispatch).
functional = SimpleNamespace(
    conv1d=_conv1d, linear=_linear, relu=_relu, add=_add, add_relu=_add_relu,
    max_pool1d=_max_pool1d, avg_pool1d=_avg_pool1d, quantize_per_tensor=_quantize_per_tensor,
    dequantize=_dequantize,
)


# ---- models --------------------------------------------------------------------------------
_ALIGN = 256


def _attr(attrs, names, default=None, what=""):
    for n in names:
        if n in attrs:
            v = attrs[n]
            if isinstance(v, (list, tuple)):
                if len(v) != 1:
                    raise UnsupportedOnDevice(f"{what}: attribute {n}={v!r} is not 1-d")
                v = v[0]
            return v
    if default is None:
        raise UnsupportedOnDevice(f"{what}: attribute {names[0]!r} is missing "
                                  f"(attrs: {sorted(attrs)})")
    return default


class _Step:
    """One lowered op: infer(shapes) -> output shape; run(bufs) launches its kernel."""

    def __init__(self, kind, inputs, outputs, infer, run):
        self.kind, self.inputs, self.outputs, self.infer, self.run = \
            kind, inputs, outputs, infer, run


class DeviceModel:
    """A qrt model lowered to the GPU: weights on the device from load on, activations in one
    device arena (allocated per input shape, reused across calls)."""

    #: op kinds with a GPU lowering; anything else is refused at load time
    SUPPORTED = ("quantize", "dequantize", "conv1d", "conv_relu1d", "linear", "linear_relu",
                 "relu", "add", "add_relu", "max_pool1d", "avg_pool1d", "flatten", "reshape",
                 "identity")

    def __init__(self, blob, device_index: int = 0):
        self.blob = blob
        self.device_index = int(device_index)
        self._t = blob.tensors
        missing = [f"op {o.index} {o.kind!r} ({o.name})" for o in blob.ops
                   if o.kind not in self.SUPPORTED]
        if missing:
            raise UnsupportedOnDevice(
                "this model cannot run on device 'cuda': no GPU kernel for " + ", ".join(missing)
                + ". Load it on the CPU (qrt.load(path)).")
        with cp.cuda.Device(self.device_index):
            self.steps = [self._lower(o) for o in blob.ops]
        self._plan_key = None
        self._arena = None
        self._views: Dict[int, object] = {}

    # -- lowering ------------------------------------------------------------------------
    def _entry(self, i):
        return self._t[i]

    def _act_q(self, i, what):
        e = self._entry(i)
        if e.qscheme != "per_tensor_affine" or e.dtype not in ("quint8", "qint8"):
            raise UnsupportedOnDevice(f"{what}: tensor {e.name!r} is {e.dtype} {e.qscheme}; the "
                                      "GPU backend needs per-tensor quint8/qint8 activations")
        return e

    def _weight(self, op):
        ws = [self._entry(p) for p in op.params if self._entry(p).dtype == "qint8"]
        bs = [self._entry(p) for p in op.params if self._entry(p).dtype == "float32"]
        what = f"op {op.index} {op.kind}"
        if len(ws) != 1 or len(bs) > 1:
            raise UnsupportedOnDevice(f"{what}: expected one qint8 weight and at most one "
                                      "float32 bias among its params")
        w = ws[0]
        if w.qscheme == "per_channel_affine":
            if w.axis != 0:
                raise UnsupportedOnDevice(f"{what}: per-channel weights must use axis 0")
            scales = np.asarray(self._entry(w.scales_index).array, dtype=np.float64)
            zps = np.asarray(self._entry(w.zero_points_index).array, dtype=np.int64)
        else:
            scales = np.full(w.shape[0], w.scale)
            zps = np.full(w.shape[0], w.zero_point, dtype=np.int64)
        return w.array, scales, zps, (bs[0].array if bs else None)

    def _lower(self, op) -> _Step:
        what = f"op {op.index} {op.kind!r} ({op.name})"
        k, a, ins, outs = op.kind, op.attrs, op.inputs, op.outputs
        if len(outs) != 1:
            raise UnsupportedOnDevice(f"{what}: expected one output")
        o = outs[0]

        def same(s):
            return s[0]

        if k == "quantize":
            e = self._act_q(o, what)

            def run(b, e=e):
                r = _quantize_per_tensor(b[ins[0]], e.scale, e.zero_point, e.dtype)
                b[o][...] = r.int_repr()
            return _Step(k, ins, outs, same, run)
        if k == "dequantize":
            e = self._act_q(ins[0], what)

            def run(b, e=e):
                _dequantize(DeviceQTensor._wrap(b[ins[0]], as_dtype(e.dtype), e.scale,
                                                e.zero_point), out=b[o])
            return _Step(k, ins, outs, same, run)
        if k in ("conv1d", "conv_relu1d", "linear", "linear_relu"):
            w, sc, zp, bias = self._weight(op)
            lin = k.startswith("linear")
            if lin:
                layer = DeviceConv1d(w, sc, zp, bias, linear=True)
            else:
                if _attr(a, ("padding_mode",), "zeros", what) != "zeros":
                    raise UnsupportedOnDevice(f"{what}: only padding_mode 'zeros' is supported")
                layer = DeviceConv1d(
                    w, sc, zp, bias, stride=_attr(a, ("stride",), 1, what),
                    padding=_attr(a, ("padding", "pad"), 0, what),
                    dilation=_attr(a, ("dilation",), 1, what),
                    groups=_attr(a, ("groups",), 1, what))
            ei, eo = self._act_q(ins[0], what), self._act_q(o, what)
            relu = k.endswith("relu1d") or k == "linear_relu"

            def run(b, layer=layer, ei=ei, eo=eo, relu=relu):
                x = DeviceQTensor._wrap(b[ins[0]], quint8, ei.scale, ei.zero_point)
                layer(x, eo.scale, eo.zero_point, relu=relu, out=b[o])
            return _Step(k, ins, outs, lambda s, layer=layer: layer.out_shape(s[0]), run)
        if k == "relu":
            ei, eo = self._act_q(ins[0], what), self._act_q(o, what)
            if (ei.scale, ei.zero_point) != (eo.scale, eo.zero_point):
                raise UnsupportedOnDevice(f"{what}: relu must keep its input's qparams")

            def run(b, ei=ei):
                d = b[ins[0]]
                _launch("qrt_cu_relu_u8" if ei.dtype == "quint8" else "qrt_cu_relu_s8", d.size,
                        (d, np.int64(d.size), np.int32(ei.zero_point), b[o]))
            return _Step(k, ins, outs, same, run)
        if k in ("add", "add_relu"):
            ea, eb, eo = (self._act_q(i, what) for i in (ins[0], ins[1], o))
            Q.add_scale_ratios(ea.scale, eb.scale, eo.scale)  # refuse at load, as torch would

            def infer(s):
                if s[0] != s[1]:
                    raise UnsupportedOnDevice(f"{what}: shapes {s[0]} and {s[1]} differ")
                return s[0]

            def run(b, ea=ea, eb=eb, eo=eo, relu=(k == "add_relu")):
                _add_impl(DeviceQTensor._wrap(b[ins[0]], quint8, ea.scale, ea.zero_point),
                          DeviceQTensor._wrap(b[ins[1]], quint8, eb.scale, eb.zero_point),
                          eo.scale, eo.zero_point, relu, out=b[o])
            return _Step(k, ins, outs, infer, run)
        if k in ("max_pool1d", "avg_pool1d"):
            ei, eo = self._act_q(ins[0], what), self._act_q(o, what)
            if (ei.scale, ei.zero_point) != (eo.scale, eo.zero_point):
                raise UnsupportedOnDevice(f"{what}: pooling must keep its input's qparams")
            ks = _attr(a, ("kernel_size",), None, what)
            st = _attr(a, ("stride",), ks, what)
            pd = _attr(a, ("padding",), 0, what)
            dl = _attr(a, ("dilation",), 1, what)
            cm = bool(_attr(a, ("ceil_mode",), False, what))
            if k == "avg_pool1d" and a.get("divisor_override") is not None:
                raise UnsupportedOnDevice(f"{what}: divisor_override is not supported")

            def infer(s, ks=ks, st=st, pd=pd, dl=dl, cm=cm):
                lo = Q.pool1d_len_out(s[0][-1], int(ks), int(st), int(pd), int(dl), cm)
                return s[0][:-1] + (lo,)

            def run(b, ei=ei, k=k):
                x = DeviceQTensor._wrap(b[ins[0]], quint8, ei.scale, ei.zero_point)
                if k == "max_pool1d":
                    _max_pool1d(x, ks, st, pd, dl, cm, out=b[o])
                else:
                    _avg_pool1d(x, ks, st, pd, cm, out=b[o])
            return _Step(k, ins, outs, infer, run)
        if k in ("flatten", "reshape", "identity"):
            eo = self._entry(o)

            def infer(s, eo=eo):
                n = int(np.prod(s[0], dtype=np.int64))
                if eo.batched and s[0]:
                    rest = int(np.prod(eo.shape[1:], dtype=np.int64))
                    if rest == 0 or n % rest:
                        raise UnsupportedOnDevice(f"{what}: cannot reshape {s[0]} to "
                                                  f"(N,)+{eo.shape[1:]}")
                    return (n // rest,) + tuple(eo.shape[1:])
                return tuple(eo.shape)

            def run(b):
                b[o][...] = b[ins[0]].reshape(b[o].shape)
            return _Step(k, ins, outs, infer, run)
        raise UnsupportedOnDevice(f"{what}: no GPU kernel")

    # -- execution -----------------------------------------------------------------------
    def _plan(self, in_shapes: Dict[int, tuple]):
        key = tuple(sorted(in_shapes.items()))
        if key == self._plan_key:
            return
        shapes = dict(in_shapes)
        for st in self.steps:
            shapes[st.outputs[0]] = tuple(int(d) for d in st.infer([shapes[i] for i in st.inputs]))
        offsets, total = {}, 0
        for i, shp in shapes.items():
            if i in in_shapes:
                continue
            nb = int(np.prod(shp, dtype=np.int64)) * self._entry(i).np_dtype.itemsize
            offsets[i] = total
            total += -(-max(nb, 1) // _ALIGN) * _ALIGN
        self._arena = cp.empty(max(total, 1), dtype=cp.uint8)  # the one activation arena
        self._views = {}
        for i, off in offsets.items():
            e = self._entry(i)
            shp = shapes[i]
            nb = int(np.prod(shp, dtype=np.int64)) * e.np_dtype.itemsize
            self._views[i] = self._arena[off:off + nb].view(e.np_dtype).reshape(shp)
        self._plan_key = key

    def _input_array(self, i, x):
        e = self._entry(i)
        if isinstance(x, DeviceQTensor):
            x = x.int_repr()
        elif isinstance(x, QTensor):
            if e.qscheme != "per_tensor_affine" or \
                    (x.q_scale(), x.q_zero_point()) != (e.scale, e.zero_point):
                raise ValueError(f"input {e.name!r}: QTensor qparams differ from the model's "
                                 f"({e.scale}, {e.zero_point})")
            x = np.ascontiguousarray(x.int_repr())
        arr = cp.ascontiguousarray(cp.asarray(x))
        if arr.dtype != e.np_dtype:
            if e.np_dtype == np.float32 and arr.dtype.kind == "f":
                arr = arr.astype(cp.float32)
            else:
                raise TypeError(f"input {e.name!r} must be {e.dtype}, got {arr.dtype}")
        want = e.shape[1:] if e.batched else e.shape
        got = arr.shape[1:] if e.batched else arr.shape
        if tuple(got) != tuple(want):
            raise ValueError(f"input {e.name!r} has shape {arr.shape}, expected "
                             f"{('N',) + tuple(want) if e.batched else tuple(want)}")
        return arr

    def __call__(self, *inputs, as_cupy: bool = False):
        """Run the model.  Inputs: float arrays (numpy or CuPy) or QTensors, one per model input.
        Returns numpy arrays (CuPy arrays with ``as_cupy=True``); a list when the model has
        several outputs."""
        ids = self.blob.inputs
        if len(inputs) != len(ids):
            raise TypeError(f"the model takes {len(ids)} input(s), got {len(inputs)}")
        with cp.cuda.Device(self.device_index):
            arrs = {i: self._input_array(i, x) for i, x in zip(ids, inputs)}
            self._plan({i: tuple(a.shape) for i, a in arrs.items()})
            bufs = dict(self._views)
            bufs.update(arrs)
            for st in self.steps:
                st.run(bufs)
            outs = []
            for i in self.blob.outputs:
                r = bufs[i].copy()  # the arena is reused by the next call
                outs.append(r if as_cupy else cp.asnumpy(r))
        return outs[0] if len(outs) == 1 else outs

    run = __call__


def load(path, device_index: int = 0, verify: bool = True, **_ignored) -> DeviceModel:
    """Read and validate a ``.bin`` blob (qrt.loader.read_blob) and lower it to the GPU."""
    from qrt.loader import read_blob
    return DeviceModel(read_blob(path, verify=verify), device_index)
