# SPDX-License-Identifier: Apache-2.0
"""Thin wrapper over include/qrt/conv1d.h. Shapes are checked here, semantics in the C gate."""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stddef cimport ptrdiff_t

from qrt._kernels cimport *

cdef extern from "qrt/rnn.h" nogil:
    void qrt_choose_qparams_u8(float mn, float mx, double *scale, int32_t *zero_point)

cdef extern from "qrt/minmax.h" nogil:
    int qrt_minmax_finite_f32(const float *x, size_t n, float *lo, float *hi)

cdef extern from "qrt/conv1d_threads.h" nogil:
    int QRT_POOL_MAX_THREADS
    double qrt_conv1d_mt_min_work
    int qrt_conv1d_supports(int isa)
    int qrt_pool_get_threads()
    void qrt_pool_set_threads(int n)
    ctypedef struct qrt_conv1d_split:
        int chunks
        int axis
        long long per
        long long units
        int parts_t
        int parts_c
    qrt_conv1d_split qrt_conv1d_split_of(const qrt_conv1d_params *p, int threads)
    size_t qrt_conv1d_u8_mt_scratch_size(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                         int variant, int threads)
    qrt_status qrt_conv1d_u8_mt(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                                const int8_t *wpack, const int32_t *wsum,
                                const qrt_conv1d_quant *q, void *out, void *scratch,
                                size_t scratch_size, int variant, int threads)

MAX_TAPS = QRT_CONV1D_MAX_TAPS
OUT_U8 = QRT_CONV1D_OUT_U8
OUT_F32 = QRT_CONV1D_OUT_F32

ctypedef fused out_t:
    uint8_t
    float


MAX_THREADS = QRT_POOL_MAX_THREADS


def set_num_threads(n):
    """Threads qrt's conv1d / linear kernels use (the calling thread included)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"set_num_threads: n must be an int, got {type(n).__name__}")
    if n < 1 or n > QRT_POOL_MAX_THREADS:
        raise ValueError(f"set_num_threads: n={n} must be in [1, {QRT_POOL_MAX_THREADS}]")
    qrt_pool_set_threads(n)


def get_num_threads():
    """Threads qrt's conv1d / linear kernels use (the calling thread included)."""
    return qrt_pool_get_threads()


def _set_mt_min_work(double v):
    """Set the work threshold below which one thread is used; returns the old one (tests)."""
    global qrt_conv1d_mt_min_work
    old = qrt_conv1d_mt_min_work
    qrt_conv1d_mt_min_work = v
    return old


def _default_threads():
    import os
    env = os.environ.get("QRT_NUM_THREADS")
    if env is not None and env.strip():
        try:
            v = int(env)
            if 1 <= v <= QRT_POOL_MAX_THREADS:
                return v
        except ValueError:
            pass
        import warnings
        warnings.warn(f"QRT_NUM_THREADS={env!r} is not an integer in [1, {QRT_POOL_MAX_THREADS}]; "
                      f"using the number of available cores", RuntimeWarning, stacklevel=2)
    try:
        v = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        v = os.cpu_count() or 1
    return max(1, min(v, QRT_POOL_MAX_THREADS))


qrt_pool_set_threads(_default_threads())


def split(Py_ssize_t n, Py_ssize_t c_in, Py_ssize_t c_out, Py_ssize_t len_in, Py_ssize_t len_out,
          Py_ssize_t kernel, Py_ssize_t stride=1, Py_ssize_t dilation=1, Py_ssize_t pad_left=0,
          Py_ssize_t groups=1, int threads=-1):
    """(chunks, axis, per, parts_t, parts_c) of the multi-thread cut (axis 0 batch, 1 positions,
    2 channels, 3 a grid of parts_t position parts x parts_c channel parts)."""
    cdef qrt_conv1d_params p
    _fill(&p, n, c_in, c_out, len_in, len_out, kernel, stride, dilation, pad_left, groups)
    cdef qrt_conv1d_split s = qrt_conv1d_split_of(&p, threads if threads > 0
                                                  else qrt_pool_get_threads())
    return int(s.chunks), int(s.axis), int(s.per), int(s.parts_t), int(s.parts_c)


# QRT_ISA_* code -> name, from the one table in src/cpu.c (qrt_isa_name).
ISA_NAMES = {v: qrt_isa_name(v).decode() for v in range(QRT_ISA_COUNT)}


def variants():
    """QRT_ISA_* codes of every conv1d variant this build and CPU can run (reference first)."""
    return [v for v in sorted(ISA_NAMES) if qrt_conv1d_supports(v)]


def isa():
    """The QRT_ISA_* code of the conv1d variant this CPU runs."""
    return qrt_conv1d_isa()


def variant(int requested=-1):
    """The QRT_ISA_* code a call with ``variant=requested`` runs (0 forces the reference)."""
    return qrt_conv1d_variant(requested)


def layout(uint32_t cg, uint32_t kernel):
    """(im2col, kc, cq) of the packed weight for c_in/groups = cg and this kernel."""
    cdef qrt_conv1d_layout lay = qrt_conv1d_layout_of(cg, kernel)
    return int(lay.im2col), int(lay.kc), int(lay.cq)


def packed_weight_size(uint32_t c_out, uint32_t cg, uint32_t kernel):
    """Bytes of the packed weight."""
    return qrt_conv1d_packed_weight_size(c_out, cg, kernel)


def pack_weights(const int8_t[:, :, ::1] w, int8_t[::1] wpack, int32_t[::1] wsum):
    """Pack w [c_out][cg][K] into wpack (quad layout) and its per-channel sums into wsum."""
    cdef uint32_t c_out = w.shape[0], cg = w.shape[1], k = w.shape[2]
    if cg * k > QRT_CONV1D_MAX_TAPS:
        raise ValueError(f"weight: {cg} x {k} taps per output exceeds the int32 accumulation "
                         f"bound ({QRT_CONV1D_MAX_TAPS})")
    if <size_t>wpack.shape[0] != qrt_conv1d_packed_weight_size(c_out, cg, k):
        raise ValueError("pack_weights: wpack has the wrong size")
    if wsum.shape[0] != c_out:
        raise ValueError("pack_weights: wsum needs one entry per output channel")
    if c_out == 0:
        return
    with nogil:
        qrt_conv1d_pack_weights(c_out, cg, k, &w[0, 0, 0], &wpack[0], &wsum[0])


cdef int _fill(qrt_conv1d_params *p, Py_ssize_t n, Py_ssize_t c_in, Py_ssize_t c_out,
               Py_ssize_t len_in, Py_ssize_t len_out, Py_ssize_t kernel, Py_ssize_t stride,
               Py_ssize_t dilation, Py_ssize_t pad_left, Py_ssize_t groups) except -1:
    cdef long long lim = (<long long>1) << 31  # not Py_ssize_t: 32-bit on armv7l
    for name, v in (("n", n), ("c_in", c_in), ("c_out", c_out), ("len_in", len_in),
                    ("len_out", len_out), ("kernel", kernel), ("stride", stride),
                    ("dilation", dilation), ("padding", pad_left), ("groups", groups)):
        if v < 0 or v >= lim:
            raise ValueError(f"conv1d: {name}={v} is out of range")
    p.n, p.c_in, p.c_out = n, c_in, c_out
    p.len_in, p.len_out = len_in, len_out
    p.kernel, p.stride, p.dilation = kernel, stride, dilation
    p.pad_left, p.groups = pad_left, groups
    return 0


cdef int _check_status(qrt_status st, const qrt_conv1d_params *p) except -1:
    """The one place a qrt_status becomes an exception."""
    if st == QRT_OK:
        return 0
    if st == QRT_ERR_OVERFLOW:
        taps = (p.c_in // p.groups if p.groups else p.c_in) * p.kernel
        if taps > QRT_CONV1D_MAX_TAPS:
            raise ValueError(f"conv1d: {p.c_in // p.groups if p.groups else p.c_in} x "
                             f"{p.kernel} taps per output exceed the int32 accumulation bound "
                             f"({QRT_CONV1D_MAX_TAPS})")
        raise ValueError(f"conv1d: a size is too large for the kernel's index arithmetic "
                         f"(batch {p.n}, length {p.len_in} -> {p.len_out}, padding "
                         f"{p.pad_left}, kernel {p.kernel}, stride {p.stride}, dilation "
                         f"{p.dilation}, channels {p.c_in} -> {p.c_out})")
    raise ValueError(f"qrt_conv1d_u8 rejected its arguments (status {st})")


def scratch_size(Py_ssize_t n, Py_ssize_t c_in, Py_ssize_t c_out, Py_ssize_t len_in,
                 Py_ssize_t len_out, Py_ssize_t kernel, Py_ssize_t stride, Py_ssize_t dilation,
                 Py_ssize_t pad_left, Py_ssize_t groups, int variant=-1):
    """Scratch bytes conv1d() needs for this geometry."""
    cdef qrt_conv1d_params p
    _fill(&p, n, c_in, c_out, len_in, len_out, kernel, stride, dilation, pad_left, groups)
    return qrt_conv1d_u8_scratch_size(&p, NULL, variant)


def conv1d(const uint8_t[:, :, :] x, const int8_t[:, :, ::1] w, const int8_t[::1] wpack,
           const int32_t[::1] wsum, const int32_t[::1] weight_zero, const int32_t[::1] bias_q,
           const float[::1] scale, const float[::1] bias_f, out_t[:, :, :] out,
           uint8_t[::1] scratch, *, Py_ssize_t stride=1, Py_ssize_t dilation=1,
           Py_ssize_t pad_left=0, Py_ssize_t groups=1, int input_zero=0, int output_zero=0,
           int output_min=0, int output_max=255, int variant=-1, wpack_cl=None):
    """out[n, oc, t] = conv1d of x [n, c, t] (any strides) with w [c_out, c_in/groups, K].

    ``out`` is uint8 (static requantization: bias_q, scale = requant scale) or float32
    (dynamic: scale = output scale, bias_f).  ``w`` is read by the reference, ``wpack``/``wsum``
    by the dot-product variants; ``variant=0`` forces the reference.  ``wpack_cl``
    (:func:`pack_cl`, dense 1x1 layers only) lets the AVX-512 VNNI variant take its
    channels-in-lanes path on short rows.
    """
    cdef Py_ssize_t n = x.shape[0], c_in = x.shape[1], len_in = x.shape[2]
    cdef Py_ssize_t c_out = w.shape[0], kernel = w.shape[2], len_out = out.shape[2]
    if out.shape[0] != n or out.shape[1] != c_out:
        raise ValueError(f"conv1d: out has shape {tuple(out.shape)[:3]}, expected "
                         f"({n}, {c_out}, L_out)")
    if groups <= 0 or c_in % groups or c_out % groups:
        raise ValueError(f"conv1d: groups={groups} must divide c_in={c_in} and c_out={c_out}")
    if w.shape[1] * groups != c_in:
        raise ValueError(f"conv1d: weight has {w.shape[1]} input channels per group; the input "
                         f"has {c_in} channels in {groups} groups")
    for name, arr in (("weight_zero", weight_zero), ("bias_q", bias_q), ("wsum", wsum)):
        if arr.shape[0] != c_out:
            raise ValueError(f"conv1d: {name} needs {c_out} entries, got {arr.shape[0]}")
    if scale.shape[0] != c_out or bias_f.shape[0] != c_out:
        raise ValueError(f"conv1d: scale and bias_f need {c_out} entries")
    cdef qrt_conv1d_params p
    _fill(&p, n, c_in, c_out, len_in, len_out, kernel, stride, dilation, pad_left, groups)
    p.x_stride_n, p.x_stride_c, p.x_stride_t = x.strides[0], x.strides[1], x.strides[2]
    cdef Py_ssize_t es = sizeof(out_t)
    p.y_stride_n, p.y_stride_c, p.y_stride_t = (out.strides[0] // es, out.strides[1] // es,
                                                out.strides[2] // es)
    p.input_zero, p.output_zero = input_zero, output_zero
    p.output_min, p.output_max = output_min, output_max
    p.out_kind = QRT_CONV1D_OUT_F32 if out_t is float else QRT_CONV1D_OUT_U8
    cdef qrt_status st = qrt_conv1d_check(&p)
    if st == QRT_OK and (n == 0 or len_out == 0):
        return
    cdef qrt_conv1d_quant q
    cdef size_t need = qrt_conv1d_u8_scratch_size(&p, NULL, variant)
    cdef void *sp = NULL
    cdef const int8_t *wp = NULL
    if st == QRT_OK:
        if <size_t>scratch.shape[0] < need:
            raise ValueError(f"conv1d: scratch has {scratch.shape[0]} bytes, needs {need}")
        if need and <size_t>wpack.shape[0] != \
                qrt_conv1d_packed_weight_size(c_out, c_in // groups, kernel):
            raise ValueError("conv1d: packed weight does not match the geometry")
        if scratch.shape[0]:
            sp = &scratch[0]
        if wpack.shape[0]:
            wp = &wpack[0]
        q.weight_zero, q.bias_q = &weight_zero[0], &bias_q[0]
        q.scale, q.bias_f = &scale[0], &bias_f[0]
        q.wpack_cl = _cl_pointer(wpack_cl, c_out, c_in, kernel, groups)
        q.wpack_a2 = NULL   # the AVX2 variant packs its panels in the scratch
        q.wsum_c16 = NULL   # the NEON c16 tile checks and sums the weights itself
        q.wpack_dot = NULL  # the NEON-dot GEMM tile packs its panels on its stack
        with nogil:
            st = qrt_conv1d_u8(&p, &x[0, 0, 0], &w[0, 0, 0], wp, &wsum[0], &q,
                               <void *>&out[0, 0, 0], sp, scratch.shape[0], variant)
    _check_status(st, &p)


cdef const int8_t *_cl_pointer(object wpack_cl, Py_ssize_t c_out, Py_ssize_t c_in,
                               Py_ssize_t kernel, Py_ssize_t groups) except? NULL:
    """The channels-in-lanes weight's address (NULL for None), checked against the layer."""
    if wpack_cl is None:
        return NULL
    cdef const int8_t[::1] v = wpack_cl
    if kernel != 1 or groups != 1:
        raise ValueError("conv1d: wpack_cl is for dense 1x1 layers (kernel 1, groups 1)")
    if <size_t>v.shape[0] != qrt_conv1d_cl_weight_size(<uint32_t>c_out, <uint32_t>c_in):
        raise ValueError("conv1d: wpack_cl does not match the geometry")
    return &v[0]


def cl_weight_size(uint32_t c_out, uint32_t c_in):
    """Bytes of a dense 1x1 layer's channels-in-lanes weight (qrt_conv1d_cl_weight_size)."""
    return qrt_conv1d_cl_weight_size(c_out, c_in)


def pack_cl(const int8_t[::1] wpack, uint32_t c_out, uint32_t c_in):
    """The channels-in-lanes order (qrt_conv1d_pack_cl) of a dense 1x1 layer's packed weight
    ``wpack`` (:func:`pack_weights` with kernel 1), as a new int8 array."""
    import numpy as np
    if <size_t>wpack.shape[0] != qrt_conv1d_packed_weight_size(c_out, c_in, 1):
        raise ValueError("pack_cl: wpack has the wrong size")
    out = np.zeros(max(<Py_ssize_t>qrt_conv1d_cl_weight_size(c_out, c_in), 1), np.int8)
    cdef int8_t[::1] o = out
    if wpack.shape[0]:
        with nogil:
            qrt_conv1d_pack_cl(c_out, c_in, &wpack[0], &o[0])
    return out


def cl_max_len():
    """Rows of at most this many positions take the channels-in-lanes path."""
    return QRT_CONV1D_CL_MAX_LEN


cdef class Plan:
    """A conv1d call prepared once for a fixed geometry, strides and quantization.

    Holds the weight/constant buffers and a scratch area, so a call only acquires the input and
    output buffers: ``run(xbuf, xoff, ybuf, yoff)`` with flat buffers and element offsets.
    """
    cdef qrt_conv1d_params p
    cdef qrt_conv1d_quant q
    cdef const int8_t[:, :, ::1] w
    cdef const int8_t[::1] wpack
    cdef const int32_t[::1] wsum, weight_zero, bias_q
    cdef const float[::1] scale, bias_f
    cdef uint8_t[::1] scratch
    cdef size_t need
    cdef int variant
    cdef int threads
    cdef bint busy
    cdef Py_ssize_t x_lo, x_hi, y_lo, y_hi
    cdef object wpack_cl   # the channels-in-lanes weight (pack_cl) or None
    cdef object wpack_a2   # the AVX2 variant's weight panels (made here) or None
    cdef object wpack_dot  # the aarch64 NEON-dot GEMM tile's weight panels (made here) or None
    cdef object gemv_pack  # rnn_run: the packed hidden-projection weights (rnn_gemv.h)
    cdef int gemv_isa      # ... and their variant, -1 before the first rnn_run
    cdef readonly bint empty

    def __init__(self, const int8_t[:, :, ::1] w, const int8_t[::1] wpack,
                 const int32_t[::1] wsum, const int32_t[::1] weight_zero,
                 const int32_t[::1] bias_q, const float[::1] scale, const float[::1] bias_f,
                 tuple x_shape, tuple x_strides, tuple y_shape, tuple y_strides, *,
                 Py_ssize_t stride=1, Py_ssize_t dilation=1, Py_ssize_t pad_left=0,
                 Py_ssize_t groups=1, int input_zero=0, int output_zero=0, int output_min=0,
                 int output_max=255, bint out_f32=False, int variant=-1, wpack_cl=None):
        cdef Py_ssize_t n = x_shape[0], c_in = x_shape[1], len_in = x_shape[2]
        cdef Py_ssize_t c_out = w.shape[0], kernel = w.shape[2], len_out = y_shape[2]
        if y_shape[0] != n or y_shape[1] != c_out:
            raise ValueError(f"conv1d: out has shape {y_shape}, expected ({n}, {c_out}, L_out)")
        if groups <= 0 or c_in % groups or c_out % groups or w.shape[1] * groups != c_in:
            raise ValueError(f"conv1d: groups={groups}, weight {tuple(w.shape)[:3]} and "
                             f"{c_in} input channels disagree")
        for name, arr in (("weight_zero", weight_zero), ("bias_q", bias_q), ("wsum", wsum)):
            if arr.shape[0] != c_out:
                raise ValueError(f"conv1d: {name} needs {c_out} entries, got {arr.shape[0]}")
        if scale.shape[0] != c_out or bias_f.shape[0] != c_out:
            raise ValueError(f"conv1d: scale and bias_f need {c_out} entries")
        _fill(&self.p, n, c_in, c_out, len_in, len_out, kernel, stride, dilation, pad_left,
              groups)
        self.p.x_stride_n, self.p.x_stride_c, self.p.x_stride_t = x_strides
        self.p.y_stride_n, self.p.y_stride_c, self.p.y_stride_t = y_strides
        self.p.input_zero, self.p.output_zero = input_zero, output_zero
        self.p.output_min, self.p.output_max = output_min, output_max
        self.p.out_kind = QRT_CONV1D_OUT_F32 if out_f32 else QRT_CONV1D_OUT_U8
        cdef qrt_status st = qrt_conv1d_check(&self.p)
        _check_status(st, &self.p)
        self.w, self.wpack, self.wsum = w, wpack, wsum
        self.weight_zero, self.bias_q, self.scale, self.bias_f = weight_zero, bias_q, scale, bias_f
        self.q.weight_zero, self.q.bias_q = &weight_zero[0], &bias_q[0]
        self.q.scale, self.q.bias_f = &scale[0], &bias_f[0]
        self.q.wpack_cl = _cl_pointer(wpack_cl, c_out, c_in, kernel, groups)
        self.wpack_cl = wpack_cl
        self.variant = variant
        # the AVX2 variant's int16-pair weight panels, made once here instead of per call
        # (a 1x1 layer on a 7x7 image spent a third of its call on them), for the layers whose
        # path reads them (not depthwise, not the GEMV of a 1-4 row linear); the scratch then
        # holds no room for them
        cdef int32_t[::1] a2
        self.wpack_a2 = None
        self.q.wpack_a2 = NULL
        if qrt_conv1d_u8_uses_a2_panels(&self.p, variant) and c_out > 0 and w.shape[1] > 0:
            import numpy as np
            self.wpack_a2 = np.empty(max(<Py_ssize_t>qrt_conv1d_a2_weight_size(
                c_out, c_in // groups, kernel, groups), 1), np.int32)
            a2 = self.wpack_a2
            with nogil:
                qrt_conv1d_pack_a2(c_out, c_in // groups, kernel, groups, &w[0, 0, 0],
                                   &weight_zero[0], &a2[0])
            self.q.wpack_a2 = &a2[0]
        # the aarch64 NEON c16 tile's weight sums, for a dense 1x1 layer free of its -128 pairs
        # (checked once here instead of on every call)
        self.q.wsum_c16 = NULL
        if kernel == 1 and groups == 1 and c_out > 0 and c_in > 0 and \
                qrt_conv1d_c16_pairs_ok(c_out, c_in, &w[0, 0, 0]):
            self.q.wsum_c16 = &wsum[0]
        # the aarch64 NEON-dot GEMM tile's weight panels with their sums (qrt_conv1d_pack_dot),
        # made once here instead of on the tile's stack per call
        cdef int8_t[::1] dp
        self.wpack_dot = None
        self.q.wpack_dot = NULL
        if qrt_conv1d_u8_uses_dot_panels(&self.p, variant):
            import numpy as np
            # int32 storage: the panels' weight sums are read as int32 (a multiple of 16 bytes)
            self.wpack_dot = np.empty(<Py_ssize_t>qrt_conv1d_dot_weight_size(c_out, c_in) // 4,
                                      np.int32).view(np.int8)
            dp = self.wpack_dot
            with nogil:
                qrt_conv1d_pack_dot(0, c_out, c_in, &w[0, 0, 0], &dp[0])
            self.q.wpack_dot = &dp[0]
        self.threads = qrt_pool_get_threads()
        self.need = qrt_conv1d_u8_mt_scratch_size(&self.p, &self.q, variant, self.threads)
        # only the AVX-512 VNNI variant reads the packed weight (elsewhere it may be empty)
        if qrt_conv1d_variant(variant) == QRT_ISA_AVX512VNNI and <size_t>wpack.shape[0] != \
                qrt_conv1d_packed_weight_size(c_out, c_in // groups, kernel):
            raise ValueError("conv1d: packed weight does not match the geometry")
        import numpy as np
        self.scratch = np.empty(max(<Py_ssize_t>self.need, 1), np.uint8)
        self.busy = False
        self.empty = n == 0 or len_out == 0
        # element extents touched relative to the offsets (strides may be negative)
        self.x_lo = self.x_hi = self.y_lo = self.y_hi = 0
        for d, s in zip(x_shape, x_strides):
            if d > 0:
                if s < 0:
                    self.x_lo += (d - 1) * s
                else:
                    self.x_hi += (d - 1) * s
        for d, s in zip(y_shape, y_strides):
            if d > 0:
                if s < 0:
                    self.y_lo += (d - 1) * s
                else:
                    self.y_hi += (d - 1) * s

    cdef int _call(self, const uint8_t *x, void *y) except -1:
        cdef uint8_t[::1] scr
        cdef bint mine = not self.busy
        cdef int threads = qrt_pool_get_threads()
        if threads != self.threads and mine:
            import numpy as np
            self.need = qrt_conv1d_u8_mt_scratch_size(&self.p, &self.q, self.variant, threads)
            if <size_t>self.scratch.shape[0] < self.need:
                self.scratch = np.empty(<Py_ssize_t>self.need, np.uint8)
            self.threads = threads
        threads = self.threads
        if mine:
            self.busy = True
            scr = self.scratch
        else:  # the same plan is running in another thread: use a private scratch
            import numpy as np
            scr = np.empty(max(<Py_ssize_t>self.need, 1), np.uint8)
        cdef qrt_status st
        try:
            with nogil:
                st = qrt_conv1d_u8_mt(&self.p, x, &self.w[0, 0, 0],
                                      &self.wpack[0] if self.wpack.shape[0] else NULL,
                                      &self.wsum[0], &self.q, y, &scr[0], scr.shape[0],
                                      self.variant, threads)
        finally:
            if mine:
                self.busy = False
        _check_status(st, &self.p)
        return 0

    @property
    def vnni_tail(self):
        """Whether a one-thread call of this plan runs the AVX-512 VNNI row tail (the last 1..4
        positions of a 1x1 row past a multiple of 16; include/qrt/conv1d.h)."""
        return qrt_conv1d_u8_uses_vnni_tail(&self.p, &self.q, self.variant) != 0

    @property
    def dot_panels(self):
        """Whether the plan holds the aarch64 NEON-dot GEMM tile's weight panels
        (qrt_conv1d_pack_dot: a 1x1 layer of the GEMM case on a dot-product CPU)."""
        return self.wpack_dot is not None

    def set_input_zero(self, int input_zero):
        """Change the input zero point (dynamic quantization picks one per call)."""
        if input_zero < 0 or input_zero > 255:
            raise ValueError(f"conv1d: input zero point {input_zero} is outside [0, 255]")
        self.p.input_zero = input_zero

    cdef bint _fits(self, Py_ssize_t xoff, Py_ssize_t xn, Py_ssize_t yoff,
                    Py_ssize_t yn) except -1:
        """False for an empty plan; raises unless every touched element lies in the buffers."""
        if self.empty:
            return False
        if xoff + self.x_lo < 0 or xoff + self.x_hi >= xn:
            raise ValueError("conv1d: input buffer too small for its shape and strides")
        if yoff + self.y_lo < 0 or yoff + self.y_hi >= yn:
            raise ValueError("conv1d: output buffer too small for its shape and strides")
        return True

    def run_u8(self, const uint8_t[::1] xbuf, Py_ssize_t xoff, uint8_t[::1] ybuf,
               Py_ssize_t yoff):
        """Input elements at xbuf[xoff + ...], quint8 output at ybuf[yoff + ...]."""
        if self.p.out_kind != QRT_CONV1D_OUT_U8:
            raise ValueError("conv1d: this plan writes float32")
        if self._fits(xoff, xbuf.shape[0], yoff, ybuf.shape[0]):
            self._call(&xbuf[xoff], <void *>&ybuf[yoff])

    def bind_u8(self, xbuf, Py_ssize_t xoff, ybuf, Py_ssize_t yoff):
        """run_u8 on these buffers and offsets as a call of no arguments (a model plan's op
        call on its fixed arena): the buffers are checked here once and kept alive by the
        returned object, so a call only runs the kernel."""
        if self.p.out_kind != QRT_CONV1D_OUT_U8:
            raise ValueError("conv1d: this plan writes float32")
        cdef const uint8_t[::1] xv = xbuf
        cdef uint8_t[::1] yv = ybuf
        cdef _BoundU8 b = _BoundU8.__new__(_BoundU8)
        b.plan, b.xv, b.yv = self, xv, yv
        b.run = self._fits(xoff, xv.shape[0], yoff, yv.shape[0])
        if b.run:
            b.x, b.y = &xv[xoff], <void *>&yv[yoff]
        return b

    def run_f32(self, const uint8_t[::1] xbuf, Py_ssize_t xoff, float[::1] ybuf,
                Py_ssize_t yoff):
        """As run_u8, float32 output (dynamic linear)."""
        if self.p.out_kind != QRT_CONV1D_OUT_F32:
            raise ValueError("conv1d: this plan writes quint8")
        if self._fits(xoff, xbuf.shape[0], yoff, ybuf.shape[0]):
            self._call(&xbuf[xoff], <void *>&ybuf[yoff])

    def run_dynamic_f32(self, const float[::1] x, uint8_t[::1] xq, float[::1] ybuf,
                        const float[::1] wscale, float[::1] rs):
        """One dynamic linear in one call (torch's qnnpack dynamic linear, as
        qrt.nn.DynamicLinear spells it in Python): min / max of the float32 input x (the whole
        plan input, contiguous), qrt_choose_qparams_u8 over [0, 255], quantize into xq,
        rs = f32(wscale * f32(s)) (rs: this plan's scale buffer), the kernel into ybuf.
        Returns False, computing nothing, when x holds NaN or infinity (the caller raises)."""
        cdef Py_ssize_t n = x.shape[0], i, c_out = self.p.c_out
        if self.p.out_kind != QRT_CONV1D_OUT_F32:
            raise ValueError("conv1d: this plan writes quint8")
        if n == 0 or xq.shape[0] != n or self.x_lo != 0 or self.x_hi != n - 1:
            raise ValueError("conv1d: run_dynamic_f32 takes the whole contiguous plan input")
        if rs.shape[0] != c_out or wscale.shape[0] != c_out or self.q.scale != &rs[0]:
            raise ValueError("conv1d: rs must be the plan's scale buffer and wscale have "
                             "c_out entries")
        if not self._fits(0, n, 0, ybuf.shape[0]):
            return True
        cdef float lo, hi, s32
        cdef double s
        cdef int32_t z
        cdef bint bad
        with nogil:
            bad = not qrt_minmax_finite_f32(&x[0], <size_t>n, &lo, &hi)
            if not bad:
                qrt_choose_qparams_u8(lo, hi, &s, &z)
                s32 = <float>s
                qrt_quantize_f32_u8(&x[0], <size_t>n, (<float>1.0) / s32, <float>z, 0.0, 255.0,
                                    &xq[0], -1)
                for i in range(c_out):
                    rs[i] = wscale[i] * s32
        if bad:
            return False
        self.p.input_zero = z
        self._call(&xq[0], <void *>&ybuf[0])
        return True


# ---- conv2d: the im2col step (include/qrt/im2col.h) -------------------------------------------
cdef extern from "qrt/im2col.h" nogil:
    ctypedef struct qrt_im2col_params:
        uint32_t n, c, h, w, kh, kw, sh, sw, dh, dw, pad_top, pad_left, ho, wo
        int64_t x_stride_n, x_stride_c, x_stride_h, x_stride_w
        int32_t pad_value
        uint32_t layout
    uint32_t QRT_IM2COL_CK_P
    uint32_t QRT_IM2COL_C_PK
    qrt_status qrt_im2col_check(const qrt_im2col_params *p)
    uint64_t qrt_im2col_size(const qrt_im2col_params *p)
    qrt_status qrt_im2col_u8(const qrt_im2col_params *p, const uint8_t *x, uint8_t *col)
    qrt_status qrt_im2col_u8_mt(const qrt_im2col_params *p, const uint8_t *x, uint8_t *col,
                                int threads)
    int qrt_im2col_parts(const qrt_im2col_params *p, int threads)
    double qrt_im2col_mt_min_bytes

IM2COL_CK_P = QRT_IM2COL_CK_P
IM2COL_C_PK = QRT_IM2COL_C_PK
MAX_COLUMN_BYTES = 1 << 30  # one conv2d / pool2d's column buffer (outside the arena)


def _set_im2col_mt_min_bytes(double v):
    """Set the column size below which im2col runs on one thread; returns the old one (tests)."""
    global qrt_im2col_mt_min_bytes
    old = qrt_im2col_mt_min_bytes
    qrt_im2col_mt_min_bytes = v
    return old


cdef class Im2col:
    """An im2col call prepared for a fixed input geometry: ``run(xbuf, xoff, col)`` writes the
    ``size`` column bytes of the [N, C, H, W] input at xbuf[xoff + ...] (element strides)."""
    cdef qrt_im2col_params p
    cdef Py_ssize_t x_lo, x_hi
    cdef readonly Py_ssize_t size

    def __init__(self, tuple x_shape, tuple x_strides, tuple kernel, tuple stride,
                 tuple dilation, tuple pad, tuple out_hw, int pad_value, int layout):
        cdef long long lim = (<long long>1) << 32
        vals = tuple(x_shape) + tuple(kernel) + tuple(stride) + tuple(dilation) + \
            tuple(pad) + tuple(out_hw)
        if len(vals) != 14 or any(not 0 <= v < lim for v in vals):
            raise ValueError(f"im2col: geometry {vals} is out of range")
        self.p.n, self.p.c, self.p.h, self.p.w = x_shape
        self.p.kh, self.p.kw = kernel
        self.p.sh, self.p.sw = stride
        self.p.dh, self.p.dw = dilation
        self.p.pad_top, self.p.pad_left = pad
        self.p.ho, self.p.wo = out_hw
        self.p.x_stride_n, self.p.x_stride_c, self.p.x_stride_h, self.p.x_stride_w = x_strides
        self.p.pad_value = pad_value
        self.p.layout = layout
        cdef qrt_status st = qrt_im2col_check(&self.p)
        if st != QRT_OK:
            raise (OverflowError if st == QRT_ERR_OVERFLOW else ValueError)(
                f"im2col: the kernel refuses geometry {vals} (status {int(st)})")
        cdef uint64_t size = qrt_im2col_size(&self.p)
        if size > MAX_COLUMN_BYTES:
            raise ValueError(f"im2col: geometry {vals} needs a column buffer of {size} bytes, "
                             f"more than qrt allows ({MAX_COLUMN_BYTES})")
        self.size = <Py_ssize_t>size
        self.x_lo = self.x_hi = 0
        for d, s in zip(x_shape, x_strides):
            if s < 0:
                self.x_lo += (d - 1) * s
            else:
                self.x_hi += (d - 1) * s

    def parts(self, int threads):
        """Tasks the call runs as on `threads` threads (qrt_im2col_parts; 1: not cut)."""
        return qrt_im2col_parts(&self.p, threads)

    def run(self, const uint8_t[::1] xbuf, Py_ssize_t xoff, uint8_t[::1] col):
        if xoff + self.x_lo < 0 or xoff + self.x_hi >= xbuf.shape[0]:
            raise ValueError("im2col: input buffer too small for its shape and strides")
        if col.shape[0] < self.size:
            raise ValueError(f"im2col: column buffer holds {col.shape[0]} bytes, needs "
                             f"{self.size}")
        cdef qrt_status st
        cdef int threads = qrt_pool_get_threads()
        with nogil:
            st = qrt_im2col_u8_mt(&self.p, &xbuf[xoff], &col[0], threads)
        if st != QRT_OK:
            raise ValueError(f"im2col: kernel status {int(st)}")


# ---- conv2d: the direct depthwise kernel (include/qrt/dwconv2d.h) -----------------------------
cdef extern from "qrt/dwconv2d.h" nogil:
    ctypedef struct qrt_dwconv2d_params:
        uint32_t n, c_in, mult, h, w, ho, wo, kh, kw, sh, sw, dh, dw, pad_top, pad_left
        int64_t x_stride_n, x_stride_c, x_stride_h, x_stride_w
        int64_t y_stride_n, y_stride_c, y_stride_h
        int32_t input_zero, output_zero, output_min, output_max
    double qrt_dwconv2d_mt_min_work
    qrt_status qrt_dwconv2d_check(const qrt_dwconv2d_params *p)
    int qrt_dwconv2d_isa()
    int qrt_dwconv2d_variant(int variant)
    size_t qrt_dwconv2d_u8_scratch_size(const qrt_dwconv2d_params *p, int variant, int threads)
    qrt_status qrt_dwconv2d_u8(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                               const qrt_conv1d_quant *q, uint8_t *y, void *scratch,
                               size_t scratch_size, int variant, int threads)
    size_t qrt_dwconv2d_cl_weight_size(uint32_t c, uint32_t kh, uint32_t kw)
    int qrt_dwconv2d_cl_path(const qrt_dwconv2d_params *p, int variant)
    int qrt_dwconv2d_byte_path(const qrt_dwconv2d_params *p, int variant)
    int qrt_dwconv2d_permute_path(const qrt_dwconv2d_params *p, int variant, int cl)
    int qrt_dwconv2d_permute
    int qrt_dwconv2d_dot_path(const qrt_dwconv2d_params *p, int variant, int cl)
    int qrt_dwconv2d_dot
    int qrt_dwconv2d_rows_path(const qrt_dwconv2d_params *p, int variant)
    int qrt_dwconv2d_rows
    void qrt_dwconv2d_pack_cl(uint32_t c, uint32_t kh, uint32_t kw, const int8_t *w,
                              const int32_t *weight_zero, int32_t *out)


def dw_isa():
    """The QRT_ISA_* code of the depthwise conv2d variant this CPU runs."""
    return qrt_dwconv2d_isa()


def dw_variant(int requested=-1):
    """The QRT_ISA_* code a depthwise call with ``variant=requested`` runs (0: reference)."""
    return qrt_dwconv2d_variant(requested)


def dw_variants():
    """QRT_ISA_* codes of every depthwise conv2d variant this build and CPU run (ref first)."""
    return sorted({0} | {qrt_dwconv2d_variant(v) for v in range(QRT_ISA_COUNT)})


def _set_dw_permute(bint on):
    """Let AVX-512 VNNI depthwise calls take the byte-permute path (VBMI CPUs) or not (the
    paths a CPU without VBMI takes); returns the old setting."""
    global qrt_dwconv2d_permute
    old = qrt_dwconv2d_permute != 0
    qrt_dwconv2d_permute = 1 if on else 0
    return old


def _set_conv_tail(bint on):
    """Let AVX-512 VNNI 1x1 calls run a row's last 1..4 positions past a multiple of 16 as the
    row tail (qrt_conv1d_vnni_tail) or as one more 16-position vector; returns the old
    setting."""
    global qrt_conv1d_vnni_tail
    old = qrt_conv1d_vnni_tail != 0
    qrt_conv1d_vnni_tail = 1 if on else 0
    return old


def _set_dw_rows(bint on):
    """Let AVX-512 VNNI depthwise calls at stride 2 read the image rows in place (the default) or
    run the byte planes; returns the old setting."""
    global qrt_dwconv2d_rows
    old = qrt_dwconv2d_rows != 0
    qrt_dwconv2d_rows = 1 if on else 0
    return old


def _set_dw_dot(bint on):
    """Let aarch64 NEON depthwise calls on dot-product CPUs run their byte planes with sdot or
    not (the paths a CPU without the dot product takes); returns the old setting."""
    global qrt_dwconv2d_dot
    old = qrt_dwconv2d_dot != 0
    qrt_dwconv2d_dot = 1 if on else 0
    return old


def _set_dw_mt_min_work(double v):
    """Set the depthwise work threshold below which one thread is used; returns the old one."""
    global qrt_dwconv2d_mt_min_work
    old = qrt_dwconv2d_mt_min_work
    qrt_dwconv2d_mt_min_work = v
    return old


cdef class _BoundU8:
    """Plan.bind_u8's call: the plan's kernel on fixed, checked buffer addresses."""
    cdef Plan plan
    cdef object xv, yv  # the memoryviews that keep the buffers alive
    cdef const uint8_t *x
    cdef void *y
    cdef bint run

    def __call__(self):
        if self.run:
            self.plan._call(self.x, self.y)


cdef void _dw_pack_cl(const int8_t[:, ::1] w, const int32_t[::1] wz, int32_t[::1] out,
                     uint32_t c, uint32_t kh, uint32_t kw):
    qrt_dwconv2d_pack_cl(c, kh, kw, &w[0, 0], &wz[0], &out[0])


cdef const int32_t *_i32_ptr(const int32_t[::1] a):
    return &a[0]


cdef class DwPlan:
    """A direct depthwise conv2d call prepared for a fixed geometry, strides and quantization:
    ``run_u8(xbuf, xoff, ybuf, yoff)`` reads the [N, C, H, W] input at xbuf[xoff + ...]
    (element strides) and writes the contiguous [N, C*mult, Ho, Wo] output at ybuf[yoff:]."""
    cdef qrt_dwconv2d_params p
    cdef qrt_conv1d_quant q
    cdef const int8_t[:, ::1] w
    cdef const int32_t[::1] weight_zero, bias_q
    cdef const float[::1] scale
    cdef uint8_t[::1] scratch
    cdef size_t need
    cdef int variant, threads
    cdef bint busy
    cdef readonly bint w_int8  # every w - wz fits int8 (the byte-permute path's weights)
    cdef Py_ssize_t x_lo, x_hi, y_n
    cdef object wcl  # the channels-in-lanes weight pairs, or None

    def __init__(self, const int8_t[:, ::1] w, const int32_t[::1] weight_zero,
                 const int32_t[::1] bias_q, const float[::1] scale, tuple x_shape,
                 tuple x_strides, tuple kernel, tuple stride, tuple dilation, tuple pad,
                 tuple out_hw, *, int input_zero=0, int output_zero=0, int output_min=0,
                 int output_max=255, int variant=-1, bint cl=True):
        cdef long long lim = (<long long>1) << 31
        vals = tuple(x_shape) + tuple(kernel) + tuple(stride) + tuple(dilation) + \
            tuple(pad) + tuple(out_hw)
        if len(vals) != 14 or any(not 0 < v < lim for v in vals[:10] + vals[12:]) or \
                any(not 0 <= v < lim for v in vals[10:12]):
            raise ValueError(f"dwconv2d: geometry {vals} is out of range")
        n, c, h, wd = x_shape
        c_out = w.shape[0]
        if c_out % c or w.shape[1] != kernel[0] * kernel[1]:
            raise ValueError(f"dwconv2d: weight {tuple(w.shape)[:2]} does not fit {c} input "
                             f"channels and kernel {kernel}")
        for name, arr in (("weight_zero", weight_zero), ("bias_q", bias_q), ("scale", scale)):
            if arr.shape[0] != c_out:
                raise ValueError(f"dwconv2d: {name} needs {c_out} entries, got {arr.shape[0]}")
        self.p.n, self.p.c_in, self.p.mult = n, c, c_out // c
        self.p.h, self.p.w = h, wd
        self.p.ho, self.p.wo = out_hw
        self.p.kh, self.p.kw = kernel
        self.p.sh, self.p.sw = stride
        self.p.dh, self.p.dw = dilation
        self.p.pad_top, self.p.pad_left = pad
        self.p.x_stride_n, self.p.x_stride_c, self.p.x_stride_h, self.p.x_stride_w = x_strides
        ho, wo = out_hw
        self.p.y_stride_h, self.p.y_stride_c, self.p.y_stride_n = wo, ho * wo, c_out * ho * wo
        self.p.input_zero, self.p.output_zero = input_zero, output_zero
        self.p.output_min, self.p.output_max = output_min, output_max
        cdef qrt_status st = qrt_dwconv2d_check(&self.p)
        if st != QRT_OK:
            raise (OverflowError if st == QRT_ERR_OVERFLOW else ValueError)(
                f"dwconv2d: the kernel refuses geometry {vals} (status {int(st)})")
        self.w, self.weight_zero, self.bias_q, self.scale = w, weight_zero, bias_q, scale
        self.q.weight_zero, self.q.bias_q, self.q.scale = &weight_zero[0], &bias_q[0], &scale[0]
        self.q.bias_f = NULL
        self.q.wpack_cl = NULL
        # the channels-in-lanes path's weight pairs (AVX-512 VNNI, AVX2 and aarch64 NEON,
        # channel multiplier 1; the kernel takes that path for small planes, docs/kernels.md
        # 4f); cl=False: never
        if cl and c_out == c and qrt_dwconv2d_cl_path(&self.p, variant):
            import numpy as np
            self.wcl = np.empty(qrt_dwconv2d_cl_weight_size(c, kernel[0], kernel[1]) // 4,
                                np.int32)
            _dw_pack_cl(w, weight_zero, self.wcl, c, kernel[0], kernel[1])
            self.q.wpack_cl = <const int8_t *>_i32_ptr(self.wcl)
        import numpy as np
        wd = np.asarray(w, np.int32) - np.asarray(weight_zero, np.int32)[:, None]
        self.w_int8 = bool(wd.size == 0 or (wd.min() >= -128 and wd.max() <= 127))
        self.variant = variant
        self.threads = qrt_pool_get_threads()
        self._size_scratch()
        self.busy = False
        self.y_n = n * c_out * ho * wo
        self.x_lo = self.x_hi = 0
        for d, s in zip(x_shape, x_strides):
            if s < 0:
                self.x_lo += (d - 1) * s
            else:
                self.x_hi += (d - 1) * s

    cdef int _size_scratch(self) except -1:
        self.need = qrt_dwconv2d_u8_scratch_size(&self.p, self.variant, self.threads)
        if self.need > MAX_COLUMN_BYTES:
            raise ValueError(f"dwconv2d: this geometry needs {self.need} bytes of scratch, "
                             f"more than qrt allows ({MAX_COLUMN_BYTES})")
        import numpy as np
        if self.scratch is None or <size_t>self.scratch.shape[0] < self.need:
            self.scratch = np.empty(max(<Py_ssize_t>self.need, 1), np.uint8)
        return 0

    def run_u8(self, const uint8_t[::1] xbuf, Py_ssize_t xoff, uint8_t[::1] ybuf,
               Py_ssize_t yoff):
        self._check(xbuf.shape[0], xoff, ybuf.shape[0], yoff)
        self._call(&xbuf[xoff], &ybuf[yoff])

    @property
    def permute_path(self):
        """True when a call runs the byte-permute path (small NCHW planes with int8 weights
        w - wz; AVX-512 VNNI CPUs with VBMI), which comes before the others."""
        return self.w_int8 and qrt_dwconv2d_permute_path(&self.p, self.variant,
                                                         self.q.wpack_cl != NULL) != 0

    @property
    def cl_path(self):
        """True when a call runs the channels-in-lanes path (small planes; AVX-512 VNNI, AVX2
        and aarch64 NEON)."""
        return (self.q.wpack_cl != NULL and not self.permute_path and
                qrt_dwconv2d_cl_path(&self.p, self.variant) != 0)

    @property
    def dot_path(self):
        """True when a call runs the byte planes with sdot (aarch64 CPUs with the dot product:
        the byte-plane geometry over 64 outputs a plane, or any without the channels-in-lanes
        weight); byte_path is then true as well."""
        return qrt_dwconv2d_dot_path(&self.p, self.variant, self.q.wpack_cl != NULL) != 0

    @property
    def byte_path(self):
        """True when a call runs the byte-plane path (AVX-512 VNNI and aarch64 NEON; stride 1 or
        2, NCHW rows)."""
        return (not self.cl_path and not self.permute_path and
                qrt_dwconv2d_byte_path(&self.p, self.variant) != 0)

    @property
    def rows_path(self):
        """True when a byte-plane call reads the image rows in place (AVX-512 VNNI, stride 2,
        17 or more output columns: no plane copies); byte_path is then true as well."""
        return self.byte_path and qrt_dwconv2d_rows_path(&self.p, self.variant) != 0

    def bind_u8(self, xbuf, Py_ssize_t xoff, ybuf, Py_ssize_t yoff):
        """run_u8 on these buffers and offsets as a call of no arguments (see Plan.bind_u8)."""
        cdef const uint8_t[::1] xv = xbuf
        cdef uint8_t[::1] yv = ybuf
        self._check(xv.shape[0], xoff, yv.shape[0], yoff)
        cdef _BoundDw b = _BoundDw.__new__(_BoundDw)
        b.plan, b.xv, b.yv = self, xv, yv
        b.x, b.y = &xv[xoff], &yv[yoff]
        return b

    cdef int _check(self, Py_ssize_t xn, Py_ssize_t xoff, Py_ssize_t yn,
                    Py_ssize_t yoff) except -1:
        if xoff + self.x_lo < 0 or xoff + self.x_hi >= xn:
            raise ValueError("dwconv2d: input buffer too small for its shape and strides")
        if yoff < 0 or yoff + self.y_n > yn:
            raise ValueError("dwconv2d: output buffer too small")
        return 0

    cdef int _call(self, const uint8_t *x, uint8_t *y) except -1:
        cdef int threads = qrt_pool_get_threads()
        cdef bint mine = not self.busy
        cdef uint8_t[::1] scr
        if mine:
            if threads != self.threads:
                self.threads = threads
                self._size_scratch()
            self.busy = True
            scr = self.scratch
        else:  # the same plan is running in another thread: a private scratch, one thread
            import numpy as np
            threads = 1
            scr = np.empty(max(<Py_ssize_t>qrt_dwconv2d_u8_scratch_size(
                &self.p, self.variant, 1), 1), np.uint8)
        cdef qrt_status st
        try:
            with nogil:
                st = qrt_dwconv2d_u8(&self.p, x, &self.w[0, 0], &self.q, y,
                                     &scr[0], scr.shape[0], self.variant, threads)
        finally:
            if mine:
                self.busy = False
        if st != QRT_OK:
            raise ValueError(f"dwconv2d: kernel status {int(st)}")
        return 0


cdef class _BoundDw:
    """DwPlan.bind_u8's call: the plan's kernel on fixed, checked buffer addresses."""
    cdef DwPlan plan
    cdef object xv, yv
    cdef const uint8_t *x
    cdef uint8_t *y

    def __call__(self):
        self.plan._call(self.x, self.y)



# ---- recurrent layers (qrt/ops/rnn.py): the step loop around a hidden-projection plan --------
cdef extern from "qrt/rnn.h" nogil:
    ctypedef struct qrt_rnn_args:
        int mode, reverse
        uint32_t batch, hidden, steps, gates
        const float *gi
        ptrdiff_t gi_st, gi_sb
        float *y
        ptrdiff_t y_st, y_sb
        float *h
        float *c
        float *gh
        uint8_t *hq
        qrt_conv1d_params *p
        const int8_t *w
        const int8_t *wpack
        const int32_t *wsum
        const qrt_conv1d_quant *q
        float *rs
        const float *wscale
        void *scratch
        size_t scratch_size
        int variant, threads
        int16_t *xs
        const void *gpack
        int gisa
    qrt_status qrt_rnn_f32(qrt_rnn_args *a)
    qrt_status qrt_rnn_input_f32(const float *x, size_t rows, uint32_t cols, uint32_t out,
                                 uint8_t *xq, const void *gpack, int gisa, const int32_t *wz,
                                 const float *ws, const float *bias, float *gi, int *nonfinite)


cdef extern from "qrt/rnn_gemv.h" nogil:
    int qrt_rnn_gemv_pick(int variant)
    size_t qrt_rnn_gemv_pack_size(uint32_t rows, uint32_t cols, int isa)
    void qrt_rnn_gemv_pack(const int8_t *w, uint32_t rows, uint32_t cols, int isa, void *pack)

cdef int _rnn_gemv_variant = -1


def rnn_gemv_variant(int variant=-1):
    """Tests: the variant rnn_run's hidden projection requests from now on (-1, the default:
    the best the CPU has; a QRT_ISA_* code: that one if the CPU has it, else the reference
    hidden_gemv); returns the variant that runs (qrt_rnn_gemv_pick, include/qrt/rnn_gemv.h)."""
    global _rnn_gemv_variant
    _rnn_gemv_variant = variant
    return qrt_rnn_gemv_pick(variant)


def choose_qparams_u8(float mn, float mx):
    """qrt_choose_qparams_u8 (tests compare it with qrt.quantization.choose_qparams)."""
    cdef double s
    cdef int32_t z
    qrt_choose_qparams_u8(mn, mx, &s, &z)
    return s, z


cdef Py_ssize_t _extent(Py_ssize_t off, Py_ssize_t n1, Py_ssize_t s1, Py_ssize_t n2,
                        Py_ssize_t s2, Py_ssize_t row, Py_ssize_t size,
                        str what) except -1:
    """Raise unless every element of rows (i < n1, j < n2) at off + i*s1 + j*s2 + [0, row)
    lies inside [0, size)."""
    cdef Py_ssize_t lo = off, hi = off + row - 1
    if s1 < 0:
        lo += (n1 - 1) * s1
    else:
        hi += (n1 - 1) * s1
    if s2 < 0:
        lo += (n2 - 1) * s2
    else:
        hi += (n2 - 1) * s2
    if lo < 0 or hi >= size:
        raise ValueError(f"rnn: {what} buffer too small for its steps and strides")
    return 0


cdef class RnnLayer:
    """The steps of one recurrent layer and direction (include/qrt/rnn.h), its arguments
    checked once: ``RnnLayer(...)`` takes rnn_run's arguments and checks them as rnn_run does
    (the buffers it keeps are fixed: a plan's arena views), then every ``run()`` runs the
    steps on them with no per-call conversion. ``h`` (and ``c``) hold the initial state when
    run() starts and the final state after it."""
    cdef Plan hh
    cdef qrt_rnn_args a
    cdef object keep        # the buffers a points into
    cdef object xs_buf      # int16 [H] for the reference hidden_gemv
    cdef object pack        # the packed hidden weights a.gpack points into (or None)
    cdef bint gemv
    cdef int isa            # the GEMV variant _pick set up (-2: none yet; -1: gemv off)
    # the input projection, when set_input gave one (else the caller runs it)
    cdef Plan ih
    cdef object ih_keep     # (x, xq, wscale, rs, gi) as given
    cdef object ih_pack     # the packed W_ih for ih_isa (or None)
    cdef int ih_isa
    cdef const float *ih_x
    cdef uint8_t *ih_xq
    cdef const float *ih_ws
    cdef float *ih_gi
    cdef size_t ih_rows
    cdef str ih_name

    def __init__(self, Plan hh, int mode, int gates, const float[::1] wscale, float[::1] rs,
                 const float[::1] gi, Py_ssize_t gi_off, Py_ssize_t gi_st, Py_ssize_t gi_sb,
                 y, Py_ssize_t y_off, Py_ssize_t y_st, Py_ssize_t y_sb,
                 float[::1] h, c, float[::1] gh, uint8_t[::1] hq,
                 Py_ssize_t steps, bint reverse, bint gemv=True):
        cdef Py_ssize_t H = hh.p.c_in, B = hh.p.len_in, GH = hh.p.c_out
        if mode < 0 or mode > 3 or gates != (4, 3, 1, 1)[mode] or GH != gates * H or \
                hh.p.n != 1 or hh.p.kernel != 1 or hh.p.groups != 1 or \
                hh.p.out_kind != QRT_CONV1D_OUT_F32:
            raise ValueError("rnn: the hidden-projection plan does not match the layer")
        if hh.p.x_stride_c != 1 or hh.p.y_stride_c != 1 or \
                (B > 1 and (hh.p.x_stride_t != H or hh.p.y_stride_t != GH)):
            raise ValueError("rnn: the hidden-projection plan must use contiguous rows")
        if rs.shape[0] != GH or hh.q.scale != &rs[0] or wscale.shape[0] != GH:
            raise ValueError("rnn: rs must be the plan's scale buffer and wscale have G*H "
                             "entries")
        if steps < 1 or h.shape[0] != B * H or hq.shape[0] != B * H or gh.shape[0] != B * GH:
            raise ValueError("rnn: h, hq need B*H and gh B*G*H elements, steps >= 1")
        _extent(gi_off, steps, gi_st, B, gi_sb, GH, gi.shape[0], "gi")
        cdef float[::1] yv
        cdef float[::1] cv
        self.a.y = NULL
        self.a.c = NULL
        if y is not None:
            yv = y
            _extent(y_off, steps, y_st, B, y_sb, H, yv.shape[0], "y")
            self.a.y = &yv[y_off]
        if mode == 0:
            cv = c
            if cv.shape[0] != B * H:
                raise ValueError("rnn: c needs B*H elements")
            self.a.c = &cv[0]
        self.hh = hh
        self.keep = (wscale, rs, gi, y, h, c, gh, hq)
        self.a.mode, self.a.reverse = mode, reverse
        self.a.batch, self.a.hidden, self.a.steps, self.a.gates = B, H, steps, gates
        self.a.gi, self.a.gi_st, self.a.gi_sb = &gi[gi_off], gi_st, gi_sb
        self.a.y_st, self.a.y_sb = y_st, y_sb
        self.a.h, self.a.gh, self.a.hq = &h[0], &gh[0], &hq[0]
        self.a.rs, self.a.wscale = &rs[0], &wscale[0]
        self.a.xs = NULL
        self.a.gpack = NULL
        self.a.gisa = 0
        self.gemv = gemv
        self.isa = -2
        self.xs_buf = None
        self.pack = None

    def set_input(self, Plan ih, const float[::1] x, uint8_t[::1] xq,
                  const float[::1] wscale, float[::1] rs, float[::1] gi, str name):
        """Make run() compute the layer's input projection first: gi[0 .. steps*B rows) =
        the dynamic linear of x ([steps*B, I] float32, contiguous) by ``ih``'s weights, as
        ``ih.run_dynamic_f32(x, xq, gi, wscale, rs)`` computes it (the same bits): with one
        thread by the packed GEMV per row (qrt_rnn_input_f32), else by that call. ``name``
        names the layer input in the NaN / infinity error. ``gi`` must be the buffer the
        layer reads, holding its rows at 0, GH, 2 GH..."""
        cdef Py_ssize_t rows = self.a.steps * self.a.batch, I = ih.p.c_in
        if ih.p.out_kind != QRT_CONV1D_OUT_F32 or ih.p.n != 1 or ih.p.kernel != 1 or \
                ih.p.groups != 1 or ih.p.c_out != self.hh.p.c_out or ih.p.len_in != rows:
            raise ValueError("rnn: the input-projection plan does not match the layer")
        if x.shape[0] != rows * I or xq.shape[0] != rows * I or wscale.shape[0] != ih.p.c_out \
                or rs.shape[0] != ih.p.c_out or gi.shape[0] < rows * ih.p.c_out or \
                self.a.gi != &gi[0]:
            raise ValueError("rnn: the input projection's buffers do not match the layer")
        self.ih = ih
        self.ih_keep = (x, xq, wscale, rs, gi)
        self.ih_pack = None
        self.ih_isa = -2
        self.ih_x, self.ih_xq, self.ih_ws, self.ih_gi = &x[0], &xq[0], &wscale[0], &gi[0]
        self.ih_rows = rows
        self.ih_name = name

    cdef int _input(self) except -1:
        """The input projection (set_input)."""
        cdef Plan ih = self.ih
        cdef Py_ssize_t I = ih.p.c_in, GH = ih.p.c_out
        cdef int isa = qrt_rnn_gemv_pick(_rnn_gemv_variant)
        cdef size_t psize
        cdef uint8_t[::1] pk
        cdef int bad = 0
        cdef qrt_status st
        if qrt_pool_get_threads() != 1 or I > QRT_CONV1D_MAX_TAPS or \
                qrt_rnn_gemv_pack_size(<uint32_t>GH, <uint32_t>I, isa) == 0:
            x, xq, wscale, rs, gi = self.ih_keep   # the plan's own kernel (threads, reference)
            if not ih.run_dynamic_f32(x, xq, gi, wscale, rs):
                raise ValueError(f"{self.ih_name}: NaN or infinity in the values to "
                                 "quantize; torch's dynamic quantization fails on it too")
            return 0
        if isa != self.ih_isa:
            import numpy as np
            psize = qrt_rnn_gemv_pack_size(<uint32_t>GH, <uint32_t>I, isa)
            pk = np.empty(<Py_ssize_t>psize, np.uint8)
            qrt_rnn_gemv_pack(&ih.w[0, 0, 0], <uint32_t>GH, <uint32_t>I, isa, &pk[0])
            self.ih_pack, self.ih_isa = pk, isa
        pk = self.ih_pack
        with nogil:
            st = qrt_rnn_input_f32(self.ih_x, self.ih_rows, <uint32_t>I, <uint32_t>GH,
                                   self.ih_xq, &pk[0], isa, ih.q.weight_zero, self.ih_ws,
                                   ih.q.bias_f, self.ih_gi, &bad)
        if bad:
            raise ValueError(f"{self.ih_name}: NaN or infinity in the values to quantize; "
                             "torch's dynamic quantization fails on it too")
        _check_status(st, &ih.p)
        return 0

    cdef int _pick(self) except -1:
        """a.gpack / a.xs for the GEMV variant rnn_gemv_variant asks for now."""
        cdef Plan hh = self.hh
        cdef Py_ssize_t H = hh.p.c_in, GH = hh.p.c_out
        cdef int16_t[::1] xs
        cdef uint8_t[::1] pk
        cdef int isa = qrt_rnn_gemv_pick(_rnn_gemv_variant) if self.gemv else -1
        cdef size_t psize = qrt_rnn_gemv_pack_size(<uint32_t>GH, <uint32_t>H, isa) \
            if self.gemv else 0
        import numpy as np
        self.a.xs = NULL
        self.a.gpack = NULL
        self.a.gisa = 0
        if psize:
            if hh.gemv_pack is None or hh.gemv_isa != isa:
                pk = np.empty(<Py_ssize_t>psize, np.uint8)
                qrt_rnn_gemv_pack(&hh.w[0, 0, 0], <uint32_t>GH, <uint32_t>H, isa, &pk[0])
                hh.gemv_pack, hh.gemv_isa = pk, isa
            pk = hh.gemv_pack
            if <size_t>pk.shape[0] != psize:
                raise ValueError("rnn: the packed hidden weights do not match the layer")
            self.a.gpack, self.a.gisa = &pk[0], isa
            self.pack = pk
        elif self.gemv:
            if self.xs_buf is None:
                self.xs_buf = np.empty(H, np.int16)
            xs = self.xs_buf
            self.a.xs = &xs[0]
        self.isa = isa
        return 0

    def run(self):
        """The input projection (when set_input gave one), then the steps, on the buffers
        given at construction."""
        cdef Plan hh = self.hh
        if self.ih is not None:
            self._input()
        cdef int threads = qrt_pool_get_threads()
        if threads != hh.threads:
            import numpy as np
            hh.need = qrt_conv1d_u8_mt_scratch_size(&hh.p, &hh.q, hh.variant, threads)
            if <size_t>hh.scratch.shape[0] < hh.need:
                hh.scratch = np.empty(<Py_ssize_t>hh.need, np.uint8)
            hh.threads = threads
        if hh.busy:
            raise RuntimeError("rnn: the layer is already running in another thread")
        if (qrt_rnn_gemv_pick(_rnn_gemv_variant) if self.gemv else -1) != self.isa:
            self._pick()   # the first run, or rnn_gemv_variant asked for another variant
        cdef qrt_rnn_args *a = &self.a
        a.p, a.w = &hh.p, &hh.w[0, 0, 0]
        a.wpack = &hh.wpack[0] if hh.wpack.shape[0] else NULL
        a.wsum, a.q = &hh.wsum[0], &hh.q
        a.scratch, a.scratch_size = &hh.scratch[0], hh.scratch.shape[0]
        a.variant, a.threads = hh.variant, hh.threads
        cdef qrt_status st
        hh.busy = True
        try:
            with nogil:
                st = qrt_rnn_f32(a)
        finally:
            hh.busy = False
        if st == QRT_ERR_ARG:
            raise ValueError("rnn: NaN or infinity in the hidden state; torch's dynamic "
                             "quantization fails on it too")
        _check_status(st, &hh.p)


def rnn_run(Plan hh, int mode, int gates, wscale, rs, gi, Py_ssize_t gi_off,
            Py_ssize_t gi_st, Py_ssize_t gi_sb, y, Py_ssize_t y_off, Py_ssize_t y_st,
            Py_ssize_t y_sb, h, c, gh, hq, Py_ssize_t steps, bint reverse, bint gemv=True):
    """The steps of one recurrent layer and direction (include/qrt/rnn.h), once
    (:class:`RnnLayer`'s checks and one run()).

    ``hh``: the dynamic-linear plan of the hidden projection, geometry (1, H, B) -> (1, G*H, B)
    with float32 output whose scale buffer is ``rs``; ``gi``: the input projection (b_ih
    included), row (t, b) at gi_off + t*gi_st + b*gi_sb; ``y``: a float32 buffer (or None) for
    the outputs; ``h`` (and for LSTM ``c``) [B*H] hold the initial state and get the final one.
    ``gemv``: the hidden projection by the loop's own GEMV (bit-exact with the plan's kernel,
    faster for the few rows of a step); False runs the plan's kernel.
    """
    RnnLayer(hh, mode, gates, wscale, rs, gi, gi_off, gi_st, gi_sb, y, y_off, y_st, y_sb,
             h, c, gh, hq, steps, reverse, gemv).run()
