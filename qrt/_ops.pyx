# SPDX-License-Identifier: Apache-2.0
"""Thin wrappers over include/qrt/{activation,add,pool1d,cat,embedding,qarith,float_conv,
rnn_float}.h.

Shapes are checked here, semantics by the C gates, arithmetic in C. ``variant`` = 0 forces the
reference kernel (tests compare it with the dispatched one).
"""

from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t

from qrt._kernels cimport QRT_OK, qrt_status
from qrt._ops_kernels cimport *

ctypedef fused q8_t:
    uint8_t
    int8_t


cdef int _check(qrt_status st, str what) except -1:
    """The one place a kernel status becomes an exception."""
    if st != QRT_OK:
        raise ValueError(f"{what}: the kernel rejected its arguments (status {<int>st})")
    return 0


cdef inline int _range_of(q8_t dummy, int32_t *qmin, int32_t *qmax) noexcept nogil:
    if q8_t is uint8_t:
        qmin[0], qmax[0] = 0, 255
    else:
        qmin[0], qmax[0] = -128, 127
    return 0


def isa():
    """The QRT_ISA_* code of the element-wise variants this CPU runs."""
    return qrt_add_isa()


# ---- activations -------------------------------------------------------------------------
def relu(const q8_t[::1] x, q8_t[::1] out, int zero_point, int variant=-1):
    """out = max(x, zero_point); out may be x itself."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("relu: output length differs from input length")
    cdef size_t n = x.shape[0]
    if n == 0:
        return
    with nogil:
        if q8_t is uint8_t:
            qrt_relu_u8(&x[0], n, <uint8_t>zero_point, &out[0], variant)
        else:
            qrt_relu_s8(&x[0], n, <int8_t>zero_point, &out[0], variant)


def hardswish_lut(uint8_t[::1] lut, float s_in, int zp_in, float s_out, int zp_out):
    """Fill QNNPACK's 256-entry quint8 hardswish table."""
    if lut.shape[0] != 256:
        raise ValueError("hardswish_lut: the table needs 256 entries")
    with nogil:
        qrt_hardswish_lut_u8_ref(s_in, zp_in, s_out, zp_out, &lut[0])


def sigmoid_lut(uint8_t[::1] lut, float s_in, int zp_in):
    """Fill QNNPACK's 256-entry quint8 sigmoid table (output scale 1/256, zero point 0)."""
    if lut.shape[0] != 256:
        raise ValueError("sigmoid_lut: the table needs 256 entries")
    with nogil:
        qrt_sigmoid_lut_u8_ref(s_in, zp_in, &lut[0])


def lut_isa():
    """The QRT_ISA_* code of the table-lookup variant this CPU runs."""
    return qrt_lut_isa()


def _set_eltwise_mt_min(mul_min, lut_min):
    """Set the codes below which mul / lut stay on one thread; returns the old pair."""
    global qrt_mul_mt_min, qrt_lut_mt_min
    old = (qrt_mul_mt_min, qrt_lut_mt_min)
    if mul_min < 0 or lut_min < 0:
        raise ValueError("_set_eltwise_mt_min: thresholds must be >= 0")
    qrt_mul_mt_min, qrt_lut_mt_min = mul_min, lut_min
    return old


def lut(const uint8_t[::1] table, const uint8_t[::1] x, uint8_t[::1] out, int variant=-1):
    """out[i] = table[x[i]]; out may be x.  Large inputs run on the qrt pool's threads."""
    if table.shape[0] != 256:
        raise ValueError("lut: the table needs 256 entries")
    if out.shape[0] != x.shape[0]:
        raise ValueError("lut: output length differs from input length")
    if x.shape[0] == 0:
        return
    with nogil:
        qrt_lut2_u8_mt(&table[0], &table[0], &x[0], x.shape[0], x.shape[0], &out[0], variant,
                       qrt_pool_get_threads())


def hardswish_luts_aten(uint8_t[::1] lut_vec, uint8_t[::1] lut_scalar, double s_in, int zp_in,
                        double s_out, int zp_out, bint is_signed):
    """Fill ATen's generic hardswish tables (vector path, scalar tail), indexed by code byte."""
    if lut_vec.shape[0] != 256 or lut_scalar.shape[0] != 256:
        raise ValueError("hardswish_luts_aten: the tables need 256 entries")
    with nogil:
        qrt_hardswish_luts_aten_ref(s_in, zp_in, s_out, zp_out, is_signed, &lut_vec[0],
                                    &lut_scalar[0])


def sigmoid_luts_aten(uint8_t[::1] lut_vec, uint8_t[::1] lut_scalar, double s_in, int zp_in,
                      bint is_signed):
    """Fill ATen's generic sigmoid tables (output scale 1/256, zero point -128 or 0)."""
    if lut_vec.shape[0] != 256 or lut_scalar.shape[0] != 256:
        raise ValueError("sigmoid_luts_aten: the tables need 256 entries")
    with nogil:
        qrt_sigmoid_luts_aten_ref(s_in, zp_in, is_signed, &lut_vec[0], &lut_scalar[0])


def lut2(const uint8_t[::1] lut_vec, const uint8_t[::1] lut_scalar, const uint8_t[::1] x,
         uint8_t[::1] out, Py_ssize_t nvec, int variant=-1):
    """out[i] = lut_vec[x[i]] for i < nvec, lut_scalar[x[i]] after."""
    if lut_vec.shape[0] != 256 or lut_scalar.shape[0] != 256:
        raise ValueError("lut2: the tables need 256 entries")
    if out.shape[0] != x.shape[0]:
        raise ValueError("lut2: output length differs from input length")
    if nvec < 0 or nvec > x.shape[0]:
        raise ValueError("lut2: nvec must lie in [0, len(x)]")
    if x.shape[0] == 0:
        return
    with nogil:
        qrt_lut2_u8_mt(&lut_vec[0], &lut_scalar[0], &x[0], x.shape[0], nvec, &out[0], variant,
                       qrt_pool_get_threads())


# ---- add -----------------------------------------------------------------------------------
def add_qnnp_supported(float sa, int za, float sb, int zb, float so, int zo, bint relu):
    """True when QNNPACK accepts these qparams (scale ratios in [2^-14, 2^8), relu: zo < 255)."""
    cdef qrt_add_qnnp_params p
    return qrt_add_qnnp_params_init(sa, za, sb, zb, so, zo, relu, &p) == QRT_OK


def add_qnnp_params(float sa, int za, float sb, int zb, float so, int zo, bint relu):
    """(a_mult, b_mult, shift) of QNNPACK's add, for tests and docs."""
    cdef qrt_add_qnnp_params p
    _check(qrt_add_qnnp_params_init(sa, za, sb, zb, so, zo, relu, &p), "add")
    return p.a_mult, p.b_mult, p.shift


def add_qnnp(const uint8_t[::1] a, const uint8_t[::1] b, uint8_t[::1] out, float sa, int za,
             float sb, int zb, float so, int zo, bint relu, int variant=-1):
    """QNNPACK fixed-point quint8 add of equal-length a and b."""
    if a.shape[0] != b.shape[0] or out.shape[0] != a.shape[0]:
        raise ValueError("add: a, b and out must have the same number of elements")
    cdef qrt_add_qnnp_params p
    _check(qrt_add_qnnp_params_init(sa, za, sb, zb, so, zo, relu, &p), "add")
    if a.shape[0] == 0:
        return
    with nogil:
        qrt_add_u8_mt(&p, &a[0], &b[0], a.shape[0], &out[0], variant, qrt_pool_get_threads())


cdef class AddQnnp:
    """add_qnnp() with its qparams fixed (a model plan binds one per add node): the QNNPACK
    parameters are computed once; a call checks the lengths and runs the kernel on the qrt
    threads."""
    cdef qrt_add_qnnp_params p
    cdef int variant

    def __init__(self, float sa, int za, float sb, int zb, float so, int zo, bint relu,
                 int variant=-1):
        _check(qrt_add_qnnp_params_init(sa, za, sb, zb, so, zo, relu, &self.p), "add")
        self.variant = variant

    def __call__(self, const uint8_t[::1] a, const uint8_t[::1] b, uint8_t[::1] out):
        if a.shape[0] != b.shape[0] or out.shape[0] != a.shape[0]:
            raise ValueError("add: a, b and out must have the same number of elements")
        if a.shape[0] == 0:
            return
        with nogil:
            qrt_add_u8_mt(&self.p, &a[0], &b[0], a.shape[0], &out[0], self.variant,
                          qrt_pool_get_threads())

    def bind(self, a, b, out):
        """This add on these arrays as a call of no arguments (a model plan's op call on its
        fixed arena): the lengths are checked once here and the arrays kept alive by the
        returned object."""
        cdef const uint8_t[::1] av = a, bv = b
        cdef uint8_t[::1] ov = out
        if av.shape[0] != bv.shape[0] or ov.shape[0] != av.shape[0]:
            raise ValueError("add: a, b and out must have the same number of elements")
        cdef _BoundAdd r = _BoundAdd.__new__(_BoundAdd)
        r.k, r.keep, r.n = self, (av, bv, ov), av.shape[0]
        if r.n:
            r.a, r.b, r.out = &av[0], &bv[0], &ov[0]
        return r


cdef class _BoundAdd:
    """AddQnnp.bind's call: the kernel on fixed, checked addresses."""
    cdef AddQnnp k
    cdef object keep
    cdef const uint8_t *a
    cdef const uint8_t *b
    cdef uint8_t *out
    cdef size_t n

    def __call__(self):
        if self.n:
            with nogil:
                qrt_add_u8_mt(&self.k.p, self.a, self.b, self.n, self.out, self.k.variant,
                              qrt_pool_get_threads())


def add_float(const q8_t[:, ::1] a, const q8_t[:, ::1] b, q8_t[:, ::1] out, float sa, int za,
              float sb, int zb, float so, int zo, bint relu, Py_ssize_t nvec, int variant=-1):
    """ATen's generic float add over [rows][inner]; nvec leading elements per row vectorised."""
    if (a.shape[0] != b.shape[0] or a.shape[1] != b.shape[1] or out.shape[0] != a.shape[0]
            or out.shape[1] != a.shape[1]):
        raise ValueError("add: a, b and out must have the same [rows][inner] shape")
    if nvec < 0 or nvec > a.shape[1]:
        raise ValueError("add: nvec must lie in [0, inner]")
    cdef qrt_add_float_params p
    cdef int32_t qmin, qmax
    _range_of(<q8_t>0, &qmin, &qmax)
    _check(qrt_add_float_params_init(sa, za, sb, zb, so, zo, qmin, qmax, relu, &p), "add")
    if a.shape[0] == 0 or a.shape[1] == 0:
        return
    with nogil:
        if q8_t is uint8_t:
            qrt_add_float_u8(&p, &a[0, 0], &b[0, 0], a.shape[0], a.shape[1], nvec, &out[0, 0],
                             variant)
        else:
            qrt_add_float_s8(&p, &a[0, 0], &b[0, 0], a.shape[0], a.shape[1], nvec, &out[0, 0],
                             variant)


# ---- pooling ---------------------------------------------------------------------------------
def pool_isa():
    """The QRT_ISA_* code of the pooling variant this CPU runs."""
    return qrt_pool1d_isa()


cdef int _pool_params(qrt_pool1d_params *p, Py_ssize_t rows, Py_ssize_t len_in,
                      Py_ssize_t len_out, Py_ssize_t kernel, Py_ssize_t stride, Py_ssize_t pad,
                      Py_ssize_t dilation, int zero, int32_t qmin, int32_t qmax) except -1:
    cdef long long lim = 0xFFFFFFFF  # not Py_ssize_t: 32-bit on armv7l
    if not (0 <= rows <= lim and 0 <= len_in <= lim and 0 <= len_out <= lim
            and 0 <= kernel <= lim and 0 <= stride <= lim and 0 <= pad <= lim
            and 0 <= dilation <= lim):
        raise ValueError("pool1d: a size or geometry argument is outside [0, 2^32)")
    p.rows, p.len_in, p.len_out = rows, len_in, len_out
    p.kernel, p.stride, p.pad, p.dilation = kernel, stride, pad, dilation
    p.zero, p.qmin, p.qmax = zero, qmin, qmax
    p.mode, p.count_include_pad, p.scale = QRT_AVG_POOL_GENERIC, 1, 0.0
    return 0


def max_pool1d(const q8_t[:, ::1] x, q8_t[:, ::1] out, Py_ssize_t kernel, Py_ssize_t stride,
               Py_ssize_t pad, Py_ssize_t dilation, int variant=-1):
    """Max pooling of [rows][L] into [rows][Lo]; padding never wins."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("max_pool1d: input and output row counts differ")
    cdef qrt_pool1d_params p
    cdef int32_t qmin, qmax
    cdef qrt_status st
    _range_of(<q8_t>0, &qmin, &qmax)
    _pool_params(&p, x.shape[0], x.shape[1], out.shape[1], kernel, stride, pad, dilation, 0,
                 qmin, qmax)
    _check(qrt_pool1d_check(&p), "max_pool1d")
    if x.shape[0] == 0:
        return
    with nogil:
        if q8_t is uint8_t:
            st = qrt_max_pool1d_u8(&p, &x[0, 0], &out[0, 0], variant)
        else:
            st = qrt_max_pool1d_s8(&p, &x[0, 0], &out[0, 0], variant)
    _check(st, "max_pool1d")


def avg_pool1d(const q8_t[:, ::1] x, q8_t[:, ::1] out, Py_ssize_t kernel, Py_ssize_t stride,
               Py_ssize_t pad, int zero_point, bint qnnpack, bint count_include_pad,
               float scale=0.0, bint nhwc_vec=False, int variant=-1):
    """Average pooling of [rows][L]: QNNPACK's formula (scale = f32(s / f32(s*k))) or ATen's
    (nhwc_vec: the rounding of ATen's vectorised NHWC channels)."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("avg_pool1d: input and output row counts differ")
    cdef qrt_pool1d_params p
    cdef int32_t qmin, qmax
    cdef qrt_status st
    _range_of(<q8_t>0, &qmin, &qmax)
    _pool_params(&p, x.shape[0], x.shape[1], out.shape[1], kernel, stride, pad, 1, zero_point,
                 qmin, qmax)
    p.mode = QRT_AVG_POOL_QNNP if qnnpack else (
        QRT_AVG_POOL_GENERIC_VEC if nhwc_vec else QRT_AVG_POOL_GENERIC)
    p.count_include_pad = count_include_pad
    p.scale = scale
    _check(qrt_pool1d_check(&p), "avg_pool1d")
    if x.shape[0] == 0:
        return
    with nogil:
        if q8_t is uint8_t:
            st = qrt_avg_pool1d_u8(&p, &x[0, 0], &out[0, 0], variant)
        else:
            st = qrt_avg_pool1d_s8(&p, &x[0, 0], &out[0, 0], variant)
    _check(st, "avg_pool1d")


def adaptive_avg_pool1d(const q8_t[:, ::1] x, q8_t[:, ::1] out, int variant=-1):
    """ATen's generic adaptive average pooling of [rows][L] into [rows][O]."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("adaptive_avg_pool1d: input and output row counts differ")
    cdef qrt_pool1d_params p
    cdef int32_t qmin, qmax
    cdef qrt_status st
    _range_of(<q8_t>0, &qmin, &qmax)
    _pool_params(&p, x.shape[0], x.shape[1], out.shape[1], 1, 1, 0, 1, 0, qmin, qmax)
    if x.shape[0] == 0:
        return
    with nogil:
        if q8_t is uint8_t:
            st = qrt_adaptive_avg_pool1d_u8(&p, &x[0, 0], &out[0, 0], variant)
        else:
            st = qrt_adaptive_avg_pool1d_s8(&p, &x[0, 0], &out[0, 0], variant)
    _check(st, "adaptive_avg_pool1d")


cdef class Pool2dPlan:
    """A direct 2-d max / average pooling call (include/qrt/pool2d.h) for a fixed geometry:
    ``run(xbuf, xoff, ybuf, yoff)`` reads the [N, C, H, W] codes at xbuf[xoff + ...] (element
    strides, non-negative) and writes the contiguous [N, C, Ho, Wo] output at ybuf[yoff:].
    ``kind``: "max" or "avg"; ``signed``: qint8 codes; average: ``qnnpack`` (QNNPACK's
    formula with ``scale``) or ATen's generic one (``count_include_pad``, ``divisor``)."""
    cdef qrt_pool2d_params p
    cdef bint avg, signed, busy
    cdef int threads
    cdef Py_ssize_t x_hi, y_n
    cdef object scratch

    def __init__(self, str kind, bint signed, tuple shape, tuple strides, tuple out_hw,
                 tuple kernel, tuple stride, tuple pad, tuple dilation, int zero_point=0, *,
                 bint qnnpack=False, float scale=0.0, bint count_include_pad=True,
                 int divisor=0):
        if kind not in ("max", "avg"):
            raise ValueError(f"pool2d: kind must be 'max' or 'avg', got {kind!r}")
        if len(shape) != 4 or len(strides) != 4 or len(out_hw) != 2:
            raise ValueError("pool2d: shape and strides need 4 entries, out_hw 2")
        for t in (kernel, stride, pad, dilation):
            if len(t) != 2:
                raise ValueError("pool2d: kernel, stride, pad and dilation need 2 entries")
        # (bit_length of Python ints: no constant here is wider than a 32-bit C long)
        for v in shape + out_hw + kernel + stride + pad + dilation:
            if int(v) < 0 or int(v).bit_length() > 31:
                raise ValueError(f"pool2d: size {v} out of range")
        for v in strides:
            if int(v) < 0 or int(v).bit_length() > 40:
                raise ValueError(f"pool2d: stride {v} out of range")
        self.avg, self.signed = kind == "avg", signed
        self.p.n, self.p.c, self.p.h, self.p.w = shape
        self.p.ho, self.p.wo = out_hw
        self.p.xs_n, self.p.xs_c, self.p.xs_h, self.p.xs_w = strides
        self.p.kh, self.p.kw = kernel
        self.p.sh, self.p.sw = stride
        self.p.ph, self.p.pw = pad
        self.p.dh, self.p.dw = dilation
        self.p.qmin, self.p.qmax = (-128, 127) if signed else (0, 255)
        self.p.zero = zero_point
        self.p.mode = QRT_AVG_POOL_QNNP if qnnpack else QRT_AVG_POOL_GENERIC
        self.p.count_include_pad = count_include_pad
        self.p.divisor = divisor
        self.p.scale = scale
        _check(qrt_pool2d_check(&self.p), "pool2d")
        if self.avg and (dilation != (1, 1) or (qnnpack and (signed or not scale > 0))):
            raise ValueError("pool2d: average pooling takes no dilation, and QNNPACK's formula "
                             "quint8 codes with a positive scale")
        x_hi = sum((int(e) - 1) * int(st) for e, st in zip(shape, strides))
        y_n = int(shape[0]) * int(shape[1]) * int(out_hw[0]) * int(out_hw[1])
        if x_hi >= PY_SSIZE_T_MAX or y_n >= PY_SSIZE_T_MAX:
            raise ValueError("pool2d: the tensors are larger than this platform addresses")
        self.x_hi, self.y_n = x_hi, y_n
        self.threads = 0
        self._size_scratch(qrt_pool_get_threads())

    cdef int _size_scratch(self, int threads) except -1:
        """One scratch slot per thread a call may use (the pool's count when the call is
        made); a call whose plan sees another thread count re-sizes it."""
        import numpy as np
        cdef size_t nb = qrt_pool2d_scratch_size(&self.p, threads)
        if nb == <size_t>-1 or <unsigned long long>nb > (<unsigned long long>1 << 40):
            raise ValueError("pool2d: the planes are too large for its scratch")
        self.scratch = np.empty(nb, np.uint8)
        self.threads = threads
        return 0

    def run(self, const uint8_t[::1] xbuf, Py_ssize_t xoff, uint8_t[::1] ybuf,
            Py_ssize_t yoff):
        if xoff < 0 or xoff + self.x_hi >= xbuf.shape[0]:
            raise ValueError("pool2d: input buffer too small for its shape and strides")
        if yoff < 0 or yoff + self.y_n > ybuf.shape[0]:
            raise ValueError("pool2d: output buffer too small")
        cdef bint mine = not self.busy
        cdef uint8_t[::1] scr
        cdef int threads = qrt_pool_get_threads()
        if mine:
            if threads != self.threads:
                self._size_scratch(threads)
            self.busy = True
            scr = self.scratch
        else:  # the same plan is running in another thread: a private scratch, one thread
            import numpy as np
            threads = 1
            scr = np.empty(qrt_pool2d_scratch_size(&self.p, 1), np.uint8)
        cdef qrt_status st
        cdef const uint8_t *x = &xbuf[xoff]
        cdef uint8_t *y = &ybuf[yoff]
        cdef size_t nb = scr.shape[0]
        with nogil:
            if self.avg:
                if self.signed:
                    st = qrt_avg_pool2d_s8(&self.p, <const int8_t *>x, <int8_t *>y, &scr[0], nb,
                                           threads)
                else:
                    st = qrt_avg_pool2d_u8(&self.p, x, y, &scr[0], nb, threads)
            elif self.signed:
                st = qrt_max_pool2d_s8(&self.p, <const int8_t *>x, <int8_t *>y, &scr[0], nb,
                                       threads)
            else:
                st = qrt_max_pool2d_u8(&self.p, x, y, &scr[0], nb, threads)
        if mine:
            self.busy = False
        _check(st, "pool2d")


# ---- batched 2-d transpose (include/qrt/transpose.h; qrt/ops/layout.py permute) -------------
def transpose2d(const uint8_t[::1] src, uint8_t[::1] dst, Py_ssize_t esize, Py_ssize_t batch,
                Py_ssize_t rows, Py_ssize_t cols, Py_ssize_t src_bs, Py_ssize_t src_rs):
    """dst[b][c][r] = src[b * src_bs + r * src_rs + c] (elements of esize bytes: 1, 2 or 4;
    src and dst as bytes, dst contiguous [batch][cols][rows])."""
    if esize not in (1, 2, 4):
        raise ValueError(f"transpose2d: element size {esize} is not 1, 2 or 4")
    if min(batch, rows, cols, src_bs, src_rs) < 0:
        raise ValueError("transpose2d: negative size or stride")
    if batch == 0 or rows == 0 or cols == 0:
        return
    # in Python ints: Py_ssize_t products can wrap on 32-bit hosts
    b_, r_, c_ = int(batch), int(rows), int(cols)
    if ((b_ - 1) * int(src_bs) + (r_ - 1) * int(src_rs) + c_) * int(esize) > src.shape[0]:
        raise ValueError("transpose2d: source buffer too small for its sizes and strides")
    if b_ * r_ * c_ * int(esize) > dst.shape[0]:
        raise ValueError("transpose2d: destination buffer too small")
    cdef qrt_status st
    with nogil:
        st = qrt_transpose2d(esize, batch, rows, cols, &src[0], src_bs, src_rs, &dst[0])
    _check(st, "transpose2d")


# ---- cat -------------------------------------------------------------------------------------
def requant_copy(const q8_t[:, :] x, q8_t[:, :] out, float in_scale, int in_zero,
                 float out_scale, int out_zero, int variant=-1):
    """out = quantize(dequantize(x)) for [rows][len] slabs whose rows are contiguous."""
    if out.shape[0] != x.shape[0] or out.shape[1] != x.shape[1]:
        raise ValueError("cat: a slab and its destination differ in shape")
    if x.shape[0] == 0 or x.shape[1] == 0:
        return
    if x.strides[1] != sizeof(q8_t) or out.strides[1] != sizeof(q8_t) or x.strides[0] < 0 \
            or out.strides[0] < 0:
        raise ValueError("cat: slab rows must be contiguous")
    cdef qrt_requant_copy_params p
    cdef int32_t qmin, qmax
    cdef qrt_status st
    _range_of(<q8_t>0, &qmin, &qmax)
    p.in_scale, p.in_zero = in_scale, in_zero
    p.inv_out = 1.0 / out_scale
    p.out_zero_f = <float>out_zero
    p.qmin, p.qmax = qmin, qmax
    cdef size_t in_stride = x.strides[0] // sizeof(q8_t)
    cdef size_t out_stride = out.strides[0] // sizeof(q8_t)
    with nogil:
        if q8_t is uint8_t:
            st = qrt_requant_copy_u8(&p, &x[0, 0], x.shape[0], x.shape[1], in_stride,
                                     &out[0, 0], out_stride, variant)
        else:
            st = qrt_requant_copy_s8(&p, &x[0, 0], x.shape[0], x.shape[1], in_stride,
                                     &out[0, 0], out_stride, variant)
    _check(st, "cat")


# ---- embedding bags --------------------------------------------------------------------------
cdef int _bag_params(qrt_embedding_params *p, Py_ssize_t rows, Py_ssize_t dim,
                     Py_ssize_t n_idx, Py_ssize_t n_starts, Py_ssize_t out_rows,
                     Py_ssize_t out_dim, Py_ssize_t n_w) except -1:
    if n_starts < 1 or out_rows != n_starts - 1 or out_dim != dim or dim < 1:
        raise ValueError("embedding_bag: out must be [len(starts) - 1][dim], dim >= 1")
    if n_w >= 0 and n_w != n_idx:
        raise ValueError("embedding_bag: one per-sample weight per index")
    p.num_rows, p.dim, p.n_idx, p.n_bags = rows, dim, n_idx, n_starts - 1
    p.row_bytes, p.mode, p.fma_weights, p.bits, p.padding_idx = 0, 0, 0, 0, -1
    return 0


def embedding_bag_f32(const float[:, ::1] table, const int64_t[::1] idx,
                      const int64_t[::1] starts, w, float[:, ::1] out, int mode,
                      long long padding_idx=-1, bint fma_weights=True, int variant=-1):
    """out[b] = the bag idx[starts[b]:starts[b+1]] of float32 table rows (embedding_ref.h);
    ``w``: None or float32 per-sample weights (one per index, SUM only)."""
    cdef const float[::1] wv
    cdef const float *wp = NULL
    cdef qrt_embedding_params p
    cdef qrt_status st
    _bag_params(&p, table.shape[0], table.shape[1], idx.shape[0], starts.shape[0],
                out.shape[0], out.shape[1], -1 if w is None else len(w))
    if w is not None:
        wv = w
        if wv.shape[0]:
            wp = &wv[0]
    p.mode, p.padding_idx, p.fma_weights = mode, padding_idx, fma_weights
    cdef const float *tp = &table[0, 0] if table.shape[0] else NULL
    cdef const int64_t *ip = &idx[0] if idx.shape[0] else NULL
    cdef float *op = &out[0, 0] if out.shape[0] else NULL
    with nogil:
        st = qrt_embedding_bag_f32(&p, tp, ip, &starts[0], wp, op, variant)
    _check(st, "embedding_bag")


def embedding_bag_rowwise(const uint8_t[:, ::1] codes, int bits, Py_ssize_t dim,
                          const float[::1] scale, const float[::1] bias,
                          const int64_t[::1] idx, const int64_t[::1] starts, w,
                          float[:, ::1] out, int variant=-1):
    """out[b] = the sum over the bag of torch's row-wise dequantized rows (embedding_ref.h)."""
    cdef const float[::1] wv
    cdef const float *wp = NULL
    cdef qrt_embedding_params p
    cdef qrt_status st
    _bag_params(&p, codes.shape[0], dim, idx.shape[0], starts.shape[0], out.shape[0],
                out.shape[1], -1 if w is None else len(w))
    if scale.shape[0] != codes.shape[0] or bias.shape[0] != codes.shape[0]:
        raise ValueError("embedding_bag: one scale and one bias per row")
    if w is not None:
        wv = w
        if wv.shape[0]:
            wp = &wv[0]
    p.bits, p.row_bytes = bits, codes.shape[1]
    cdef const uint8_t *cp = &codes[0, 0] if codes.shape[0] and codes.shape[1] else NULL
    cdef const float *sp = &scale[0] if scale.shape[0] else NULL
    cdef const float *bp = &bias[0] if bias.shape[0] else NULL
    cdef const int64_t *ip = &idx[0] if idx.shape[0] else NULL
    cdef float *op = &out[0, 0] if out.shape[0] else NULL
    with nogil:
        st = qrt_embedding_bag_rowwise(&p, cp, sp, bp, ip, &starts[0], wp, op, variant)
    _check(st, "embedding_bag")


# ---- quantized mean over the last dim, per-channel tables (ref/qarith_ref.h) ----------------
ctypedef fused qmean_t:
    uint8_t
    int8_t
    int32_t


def mean_rows(const qmean_t[:, ::1] x, qmean_t[::1] out, int variant=-1):
    """out[r] = torch's quantized mean of row r (integer sum, float32 divide, rne)."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("mean_rows: output length differs from the row count")
    if x.shape[1] < 1:
        raise ValueError("mean_rows: rows must not be empty")
    cdef size_t rows = x.shape[0], n = x.shape[1]
    if rows == 0:
        return
    with nogil:
        if qmean_t is uint8_t:
            qrt_mean_rows_u8(&x[0, 0], rows, n, &out[0], variant)
        elif qmean_t is int8_t:
            qrt_mean_rows_s8(&x[0, 0], rows, n, &out[0], variant)
        else:
            qrt_mean_rows_s32_ref(&x[0, 0], rows, n, &out[0])


def lut_channels(const uint8_t[:, ::1] lut, const uint8_t[:, :, ::1] x,
                 uint8_t[:, :, ::1] out):
    """out[o, c, i] = lut[c, x[o, c, i]] (8-bit codes as bytes); out may be x."""
    if lut.shape[1] != 256 or lut.shape[0] != x.shape[1]:
        raise ValueError("lut_channels: the table must be [channels, 256]")
    if out.shape[0] != x.shape[0] or out.shape[1] != x.shape[1] or out.shape[2] != x.shape[2]:
        raise ValueError("lut_channels: output shape differs from input shape")
    cdef size_t o = x.shape[0], c = x.shape[1], n = x.shape[2]
    if o == 0 or c == 0 or n == 0:
        return
    with nogil:
        qrt_lut_channels_8_ref(&lut[0, 0], &x[0, 0, 0], o, c, n, &out[0, 0, 0])


# ---- float32 depthwise conv2d ------------------------------------------------------------
cdef int _dw_params(qrt_dwconv2d_f32_params *p, tuple xs, tuple ws, tuple ys, Py_ssize_t sh,
                    Py_ssize_t sw, Py_ssize_t dh, Py_ssize_t dw) except -1:
    if len(xs) != 4 or len(ws) != 3 or len(ys) != 4 or xs[0] != ys[0] or xs[1] == 0 or \
            ws[0] != ys[1] or ys[1] % xs[1]:
        raise ValueError("dwconv2d_f32: shapes of xp, w and y do not match")
    if sh < 1 or sw < 1 or dh < 1 or dw < 1:
        raise ValueError("dwconv2d_f32: strides and dilations must be >= 1")
    p.n, p.c_in, p.mult = xs[0], xs[1], ys[1] // xs[1]
    p.hp, p.wp, p.ho, p.wo = xs[2], xs[3], ys[2], ys[3]
    p.kh, p.kw, p.sh, p.sw, p.dh, p.dw = ws[1], ws[2], sh, sw, dh, dw
    return 0


def dwconv2d_f32_scratch(tuple xp_shape, tuple w_shape, tuple y_shape, Py_ssize_t sh,
                         Py_ssize_t sw, Py_ssize_t dh, Py_ssize_t dw):
    """Floats of scratch dwconv2d_f32 uses for these shapes (0: none)."""
    cdef qrt_dwconv2d_f32_params p
    _dw_params(&p, xp_shape, w_shape, y_shape, sh, sw, dh, dw)
    return qrt_dwconv2d_f32_scratch(&p)


def dwconv2d_f32(const float[:, :, :, ::1] xp, const float[:, :, ::1] w, bias,
                 float[:, :, :, ::1] y, Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t dh,
                 Py_ssize_t dw, scratch=None):
    """y = the depthwise conv of the padded input ``xp`` [N, C, Hp, Wp] with ``w``
    [C * mult, kh, kw] (+ ``bias``: None or float32 [C * mult]), include/qrt/float_conv.h;
    ``scratch``: None or a float32 buffer of dwconv2d_f32_scratch(...) floats."""
    cdef qrt_dwconv2d_f32_params p
    cdef const float[::1] bv
    cdef float[::1] sv
    cdef const float *bp = NULL
    cdef float *sp = NULL
    cdef size_t slen = 0
    cdef qrt_status st
    _dw_params(&p, (xp.shape[0], xp.shape[1], xp.shape[2], xp.shape[3]),
               (w.shape[0], w.shape[1], w.shape[2]), (y.shape[0], y.shape[1], y.shape[2],
                                                       y.shape[3]), sh, sw, dh, dw)
    if bias is not None:
        bv = bias
        if bv.shape[0] != y.shape[1]:
            raise ValueError("dwconv2d_f32: one bias per output channel")
        bp = &bv[0]
    if scratch is not None:
        sv = scratch
        slen = sv.shape[0]
        if slen:
            sp = &sv[0]
    if y.size == 0:
        return
    with nogil:
        st = qrt_dwconv2d_f32(&p, &xp[0, 0, 0, 0], &w[0, 0, 0], bp, &y[0, 0, 0, 0], sp, slen)
    _check(st, "dwconv2d_f32")


def dwconv2d_f32_cm(const float[:, :, :, ::1] xp, const float[:, :, :, ::1] wt, bias,
                    float[:, :, :, ::1] y, Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t dh,
                    Py_ssize_t dw, int variant=-1):
    """dwconv2d_f32's values with the channel multiplier innermost (include/qrt/float_conv.h):
    ``wt`` the weights tap-major, [C, kh, kw, mult] (wt[c, i, j, m] = w[c * mult + m, i, j]);
    ``variant`` 0 forces the baseline compilation (tests: the same bits as the AVX2 one)."""
    cdef qrt_dwconv2d_f32_params p
    cdef const float[::1] bv
    cdef const float *bp = NULL
    cdef qrt_status st
    if wt.shape[0] != xp.shape[1] or wt.shape[0] * wt.shape[3] != y.shape[1]:
        raise ValueError("dwconv2d_f32_cm: shapes of xp, wt and y do not match")
    _dw_params(&p, (xp.shape[0], xp.shape[1], xp.shape[2], xp.shape[3]),
               (y.shape[1], wt.shape[1], wt.shape[2]), (y.shape[0], y.shape[1], y.shape[2],
                                                         y.shape[3]), sh, sw, dh, dw)
    if bias is not None:
        bv = bias
        if bv.shape[0] != y.shape[1]:
            raise ValueError("dwconv2d_f32_cm: one bias per output channel")
        bp = &bv[0]
    if y.size == 0:
        return
    with nogil:
        st = qrt_dwconv2d_f32_cm(&p, &xp[0, 0, 0, 0], &wt[0, 0, 0, 0], bp, &y[0, 0, 0, 0],
                                 variant)
    _check(st, "dwconv2d_f32_cm")


cdef class DwConvF32:
    """One depthwise conv bound to fixed buffers (a plan's arena views and weights made at
    bind): the arguments of dwconv2d_f32 (``cm=False``: w [C * mult, kh, kw], ``scratch``) or
    dwconv2d_f32_cm (``cm=True``: wt [C, kh, kw, mult]) checked once, as those functions
    check them, then every ``run()`` is the kernel alone (which still gates the geometry:
    a window outside the input raises there): the same bits."""
    cdef qrt_dwconv2d_f32_params p
    cdef const float *xp
    cdef const float *w
    cdef const float *bp
    cdef float *y
    cdef float *sp
    cdef size_t slen
    cdef bint cm, empty
    cdef object keep

    def __init__(self, const float[:, :, :, ::1] xp, w, bias, float[:, :, :, ::1] y,
                 Py_ssize_t sh, Py_ssize_t sw, Py_ssize_t dh, Py_ssize_t dw, bint cm,
                 scratch=None):
        cdef const float[:, :, :, ::1] wt
        cdef const float[:, :, ::1] w3
        cdef const float[::1] bv
        cdef float[::1] sv
        self.cm = cm
        if cm:
            wt = w
            if wt.shape[0] != xp.shape[1] or wt.shape[0] * wt.shape[3] != y.shape[1]:
                raise ValueError("dwconv2d_f32_cm: shapes of xp, wt and y do not match")
            _dw_params(&self.p, (xp.shape[0], xp.shape[1], xp.shape[2], xp.shape[3]),
                       (y.shape[1], wt.shape[1], wt.shape[2]),
                       (y.shape[0], y.shape[1], y.shape[2], y.shape[3]), sh, sw, dh, dw)
            self.w = &wt[0, 0, 0, 0] if wt.size else NULL
        else:
            w3 = w
            _dw_params(&self.p, (xp.shape[0], xp.shape[1], xp.shape[2], xp.shape[3]),
                       (w3.shape[0], w3.shape[1], w3.shape[2]),
                       (y.shape[0], y.shape[1], y.shape[2], y.shape[3]), sh, sw, dh, dw)
            self.w = &w3[0, 0, 0] if w3.size else NULL
        self.bp = NULL
        if bias is not None:
            bv = bias
            if bv.shape[0] != y.shape[1]:
                raise ValueError("dwconv2d_f32: one bias per output channel")
            self.bp = &bv[0] if bv.shape[0] else NULL
        self.sp = NULL
        self.slen = 0
        if scratch is not None and not cm:
            sv = scratch
            self.slen = sv.shape[0]
            if self.slen:
                self.sp = &sv[0]
        self.empty = y.size == 0
        self.xp = NULL if self.empty else &xp[0, 0, 0, 0]
        self.y = NULL if self.empty else &y[0, 0, 0, 0]
        self.keep = (xp, w, bias, y, scratch)   # the buffers the pointers point into

    def run(self):
        """The conv on the buffers given at construction."""
        cdef qrt_status st
        if self.empty:
            return
        with nogil:
            if self.cm:
                st = qrt_dwconv2d_f32_cm(&self.p, self.xp, self.w, self.bp, self.y, -1)
            else:
                st = qrt_dwconv2d_f32(&self.p, self.xp, self.w, self.bp, self.y, self.sp,
                                      self.slen)
        _check(st, "dwconv2d_f32_cm" if self.cm else "dwconv2d_f32")


# ---- float32 GELU, approximate 'none' (include/qrt/float_gelu.h; qrt/ops/float_unary.py) ----
cdef extern from "qrt/float_gelu.h" nogil:
    int qrt_gelu_erf_f32(const float *x, float *y, size_t n, int variant)


def gelu_erf_f32(const float[::1] x, float[::1] y, int variant=-1):
    """y = gelu(x) (erf form), the float_gelu numpy steps in C; returns the QRT_ISA_* code
    that ran (variant -1 the best, 0 the reference, 1 AVX2, 2 AVX-512)."""
    if x.shape[0] != y.shape[0]:
        raise ValueError("gelu: output length differs from input length")
    if x.shape[0] == 0:
        return 0
    cdef int r
    with nogil:
        r = qrt_gelu_erf_f32(&x[0], &y[0], <size_t>x.shape[0], variant)
    return r


# ---- float32 softmax over contiguous rows (include/qrt/float_softmax.h; qrt/ops/float_reduce.py) ----
cdef extern from "qrt/float_softmax.h" nogil:
    int qrt_softmax_rows_f32(const float *x, float *y, size_t rows, size_t n, int variant)


def softmax_rows_f32(const float[:, ::1] x, float[:, ::1] y, int variant=-1):
    """y = softmax(x) over each row (x.shape[1] >= 1); returns the QRT_ISA_* code that ran
    (variant -1 the best, 0 the reference, 1 AVX2, 2 AVX-512)."""
    cdef Py_ssize_t rows = x.shape[0], n = x.shape[1]
    if y.shape[0] != rows or y.shape[1] != n or n < 1:
        raise ValueError("softmax: x and y must be [rows, n >= 1] alike")
    if rows == 0:
        return 0
    cdef int r
    with nogil:
        r = qrt_softmax_rows_f32(&x[0, 0], &y[0, 0], <size_t>rows, <size_t>n, variant)
    return r


# ---- float32 LayerNorm over contiguous rows (include/qrt/float_norm.h; qrt/ops/float_nn.py) ----
cdef extern from "qrt/float_norm.h" nogil:
    void qrt_layer_norm_rows_f32(const float *x, float *y, size_t rows, size_t n, float eps,
                                 const float *w, const float *b)
    void qrt_group_norm_f32(const float *x, float *y, size_t n, size_t c, size_t hw,
                            size_t groups, double eps, const float *w, const float *b)


def _affine_vecs(w, b, Py_ssize_t n, str what, str count):
    """(weight, bias) as C-contiguous float32 arrays of n elements or None; a ValueError that
    names ``what`` otherwise."""
    import numpy as _np
    out = []
    for v, name in ((w, "weight"), (b, "bias")):
        if v is None:
            out.append(None)
            continue
        if not isinstance(v, _np.ndarray) or v.dtype != _np.float32 or v.ndim != 1 or \
                not v.flags.c_contiguous or v.shape[0] != n:
            raise ValueError(f"{what}: {name} must be a contiguous float32 array of {count} "
                             "elements")
        out.append(v)
    return out


cdef inline const float *_fptr(v):
    cdef size_t p = 0 if v is None else v.ctypes.data
    return <const float *>p


def layer_norm_rows_f32(const float[:, ::1] x, float[:, ::1] y, float eps, w, b):
    """y = layer_norm(x) over each row (n = x.shape[1] >= 1), w / b: float32 [n] or None."""
    cdef Py_ssize_t rows = x.shape[0], n = x.shape[1]
    if y.shape[0] != rows or y.shape[1] != n or n < 1:
        raise ValueError("layer_norm: x and y must be [rows, n >= 1] alike")
    w, b = _affine_vecs(w, b, n, "layer_norm", "n")
    cdef const float *pw = _fptr(w)
    cdef const float *pb = _fptr(b)
    if rows == 0:
        return
    with nogil:
        qrt_layer_norm_rows_f32(&x[0, 0], &y[0, 0], <size_t>rows, <size_t>n, eps, pw, pb)

def group_norm_f32(const float[:, :, ::1] x, float[:, :, ::1] y, Py_ssize_t groups,
                   double eps, w, b):
    """y = group_norm(x) for x: [n, c, hw] contiguous, groups dividing c; w / b: float32 [c]
    or None."""
    cdef Py_ssize_t n = x.shape[0], c = x.shape[1], hw = x.shape[2]
    if y.shape[0] != n or y.shape[1] != c or y.shape[2] != hw:
        raise ValueError("group_norm: x and y must be [n, c, hw] alike")
    if groups < 1 or c % groups:
        raise ValueError("group_norm: groups must divide the channels")
    w, b = _affine_vecs(w, b, c, "group_norm", "c")
    cdef const float *pw = _fptr(w)
    cdef const float *pb = _fptr(b)
    if n == 0 or c == 0 or hw == 0:
        return
    with nogil:
        qrt_group_norm_f32(&x[0, 0, 0], &y[0, 0, 0], <size_t>n, <size_t>c, <size_t>hw,
                           <size_t>groups, eps, pw, pb)

# ---- quantized LayerNorm over contiguous rows (include/qrt/qlayer_norm.h; qrt/ops/qarith.py) ---
cdef extern from "qrt/qlayer_norm.h" nogil:
    void qrt_qlayer_norm_rows(const void *x, void *y, int is_signed, size_t rows, size_t n,
                              float sx, int32_t zx, float sy, int32_t zy, double eps,
                              const float *w, const float *b, int32_t qmin, int32_t qmax)


def qlayer_norm_rows(x, y, float sx, int32_t zx, float sy, int32_t zy, double eps, w, b,
                     int32_t qmin, int32_t qmax):
    """torch's quantized::layer_norm over each row of the 2-d C-contiguous uint8 / int8 codes
    x into y (same shape and dtype); w / b: float32 [n] or None."""
    import numpy as _np
    if not (isinstance(x, _np.ndarray) and isinstance(y, _np.ndarray)) or x.ndim != 2 or \
            x.shape != y.shape or x.dtype != y.dtype or x.dtype not in (_np.uint8, _np.int8) \
            or not x.flags.c_contiguous or not y.flags.c_contiguous or not y.flags.writeable:
        raise ValueError("qlayer_norm: x and y must be C-contiguous [rows, n] uint8 / int8 "
                         "arrays alike")
    cdef Py_ssize_t rows = x.shape[0], n = x.shape[1]
    w, b = _affine_vecs(w, b, n, "qlayer_norm", "n")
    cdef const float *pw = _fptr(w)
    cdef const float *pb = _fptr(b)
    if rows == 0 or n == 0:
        return
    cdef size_t px = x.ctypes.data, py = y.ctypes.data
    cdef int sgn = 1 if x.dtype == _np.int8 else 0
    with nogil:
        qrt_qlayer_norm_rows(<const void *>px, <void *>py, sgn, <size_t>rows, <size_t>n, sx,
                             zx, sy, zy, eps, pw, pb, qmin, qmax)

# ---- float recurrent layers (qrt/ops/rnn_float.py, include/qrt/rnn_float.h) ----------------
cdef extern from "qrt/rnn_float.h" nogil:
    ctypedef struct qrt_rnn_float_args:
        int mode, reverse
        uint32_t batch, hidden, proj, steps, gates
        const float *gi
        ptrdiff_t gi_st, gi_sb
        float *y
        ptrdiff_t y_st, y_sb
        float *h
        float *c
        float *gh
        float *hf
        const float *w_hh
        const float *b_hh
        const float *w_hr
        int variant
    int qrt_linear_f32_isa()
    void qrt_linear_f32(const float *x, size_t ldx, size_t rows, const float *w, size_t k,
                        size_t n, const float *b, float *y, size_t ldy, int variant)
    void qrt_rnn_float(const qrt_rnn_float_args *a)




def linear_f32_isa():
    """The QRT_ISA_* code of the float32 dot-product variant this CPU runs."""
    return qrt_linear_f32_isa()


cdef Py_ssize_t _panels(Py_ssize_t n, Py_ssize_t k):
    return (n + 7) // 8 * k * 8


def linear_f32(const float[:, ::1] x, const float[::1] wp, Py_ssize_t n, b, float[:, ::1] y,
               int variant=-1):
    """y[r, o] = dot(w[o], x[r]) (+ b[o]) in the fixed order of include/qrt/rnn_float.h;
    ``wp``: w [n, k] packed by qrt.ops.rnn_float.pack."""
    cdef Py_ssize_t rows = x.shape[0], k = x.shape[1]
    if k < 1 or n < 1 or wp.shape[0] != _panels(n, k) or y.shape[0] != rows or \
            y.shape[1] != n:
        raise ValueError("linear_f32: x [rows, k >= 1], packed w (n, k) and y [rows, n] "
                         "disagree")
    cdef const float[::1] bv
    cdef const float *bp = NULL
    if b is not None:
        bv = b
        if bv.shape[0] != n:
            raise ValueError("linear_f32: bias must have n entries")
        bp = &bv[0]
    if rows == 0:
        return
    with nogil:
        qrt_linear_f32(&x[0, 0], k, rows, &wp[0], k, n, bp, &y[0, 0], n, variant)


cdef int _rows_in(Py_ssize_t off, Py_ssize_t n1, Py_ssize_t s1, Py_ssize_t n2, Py_ssize_t s2,
                  Py_ssize_t row, Py_ssize_t size, str what) except -1:
    """Raise unless rows (i < n1, j < n2) of `row` floats at off + i*s1 + j*s2 fit [0, size)."""
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
        raise ValueError(f"rnn_float: {what} buffer too small for its steps and strides")
    return 0


def rnn_float_run(int mode, Py_ssize_t batch, Py_ssize_t hidden, Py_ssize_t proj,
                  const float[::1] w_hh, const float[::1] b_hh, w_hr,
                  const float[::1] gi, Py_ssize_t gi_off, Py_ssize_t gi_st, Py_ssize_t gi_sb,
                  y, Py_ssize_t y_off, Py_ssize_t y_st, Py_ssize_t y_sb,
                  float[::1] h, c, float[::1] gh, hf, Py_ssize_t steps, bint reverse,
                  int variant=-1):
    """The steps of one float recurrent layer and direction (include/qrt/rnn_float.h).

    ``gi``: the input projection (b_ih included), row (t, b) at gi_off + t*gi_st + b*gi_sb;
    ``y``: float32 buffer or None; ``h`` [B*R] (R = proj or hidden) and for LSTM ``c`` [B*H]
    hold the initial state and get the final one; ``gh`` [B*G*H] and ``hf`` [B*H] (proj)
    are scratch; ``w_hh`` and ``w_hr`` packed (qrt.ops.rnn_float.pack)."""
    if mode < 0 or mode > 3 or batch < 1 or hidden < 1 or steps < 1 or proj < 0 or \
            (proj and mode != 0):
        raise ValueError("rnn_float: bad mode, sizes or projection")
    cdef Py_ssize_t G = (4, 3, 1, 1)[mode], H = hidden, B = batch
    cdef Py_ssize_t R = proj if proj else H
    if w_hh.shape[0] != _panels(G * H, R) or b_hh.shape[0] != G * H:
        raise ValueError("rnn_float: w_hh must be [G*H, R] (packed) and b_hh [G*H]")
    if h.shape[0] != B * R or gh.shape[0] != B * G * H:
        raise ValueError("rnn_float: h needs B*R and gh B*G*H elements")
    _rows_in(gi_off, steps, gi_st, B, gi_sb, G * H, gi.shape[0], "gi")
    cdef qrt_rnn_float_args a
    cdef float[::1] yv
    cdef float[::1] cv
    cdef float[::1] hfv
    cdef const float[::1] wr
    a.y = NULL
    a.c = NULL
    a.hf = NULL
    a.w_hr = NULL
    if y is not None:
        yv = y
        _rows_in(y_off, steps, y_st, B, y_sb, R, yv.shape[0], "y")
        a.y = &yv[y_off]
    if mode == 0:
        cv = c
        if cv.shape[0] != B * H:
            raise ValueError("rnn_float: c needs B*H elements")
        a.c = &cv[0]
    if proj:
        wr = w_hr
        hfv = hf
        if wr.shape[0] != _panels(proj, H) or hfv.shape[0] != B * H:
            raise ValueError("rnn_float: w_hr must be [P, H] (packed) and hf hold B*H "
                             "elements")
        a.w_hr = &wr[0]
        a.hf = &hfv[0]
    a.mode, a.reverse = mode, reverse
    a.batch, a.hidden, a.proj, a.steps, a.gates = B, H, proj, steps, G
    a.gi, a.gi_st, a.gi_sb = &gi[gi_off], gi_st, gi_sb
    a.y_st, a.y_sb = y_st, y_sb
    a.h, a.gh = &h[0], &gh[0]
    a.w_hh, a.b_hh = &w_hh[0], &b_hh[0]
    a.variant = variant
    with nogil:
        qrt_rnn_float(&a)


# ---- bilinear upsample (include/qrt/upsample.h; qrt/ops/upsample.py) -------------------------
cdef extern from "qrt/upsample.h" nogil:
    ctypedef struct qrt_upsample_params:
        int64_t planes, c, h, w, oh, ow, nv
        int dtype, fused
        float zp
        int lo, hi
    int qrt_upsample_bilinear(const qrt_upsample_params *p, const void *x, void *y,
                              const int32_t *hi0, const int32_t *hi1, const float *hl0,
                              const float *hl1, const int32_t *wi0, const int32_t *wi1,
                              const float *wl0, const float *wl1, float *work, int variant)


cdef void _taps_in(const int32_t[::1] i0, const int32_t[::1] i1, const float[::1] l0,
                   const float[::1] l1, int64_t n, int64_t lim, str what) except *:
    cdef int64_t k
    if i0.shape[0] != n or i1.shape[0] != n or l0.shape[0] != n or l1.shape[0] != n:
        raise ValueError(f"upsample: the {what} taps need {n} entries each")
    for k in range(n):
        if i0[k] < 0 or i0[k] >= lim or i1[k] < 0 or i1[k] >= lim:
            raise IndexError(f"upsample: {what} tap {k} reads outside 0..{lim - 1}")


def upsample_bilinear(const uint8_t[::1] x, uint8_t[::1] y, int dtype, int64_t planes,
                      int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow,
                      const int32_t[::1] hi0, const int32_t[::1] hi1, const float[::1] hl0,
                      const float[::1] hl1, const int32_t[::1] wi0, const int32_t[::1] wi1,
                      const float[::1] wl0, const float[::1] wl1, float[::1] work,
                      bint fused=False, int64_t nv=0, float zp=0.0, int lo=0, int hi=255,
                      int variant=-1):
    """y = bilinear upsample of x (planes x h x w -> planes x oh x ow; x and y as uint8 views
    of their bytes; dtype 0 uint8, 1 int8, 2 float32), with the per-row / per-column taps of
    qrt/ops/upsample.py.  Returns the QRT_ISA_* code that ran."""
    cdef qrt_upsample_params p
    cdef int64_t isz = 4 if dtype == 2 else 1
    cdef int r
    if dtype < 0 or dtype > 2:
        raise ValueError("upsample: dtype must be 0 (uint8), 1 (int8) or 2 (float32)")
    if planes < 0 or c < 1 or h < 1 or w < 1 or oh < 1 or ow < 1 or planes % c:
        raise ValueError("upsample: sizes must be >= 1 and planes a multiple of c")
    if x.shape[0] != planes * h * w * isz or y.shape[0] != planes * oh * ow * isz:
        raise ValueError("upsample: x / y hold the wrong number of bytes for these sizes")
    if work.shape[0] < 2 * ow:
        raise ValueError("upsample: work needs 2 * ow floats")
    if nv < 0 or nv > c or lo > hi:
        raise ValueError("upsample: nv must lie in 0..c and lo <= hi")
    _taps_in(hi0, hi1, hl0, hl1, oh, h, "row")
    _taps_in(wi0, wi1, wl0, wl1, ow, w, "column")
    if planes == 0:
        return 0
    p.planes, p.c, p.h, p.w, p.oh, p.ow, p.nv = planes, c, h, w, oh, ow, nv
    p.dtype, p.fused, p.zp, p.lo, p.hi = dtype, fused, zp, lo, hi
    with nogil:
        r = qrt_upsample_bilinear(&p, &x[0], &y[0], &hi0[0], &hi1[0], &hl0[0], &hl1[0],
                                  &wi0[0], &wi1[0], &wl0[0], &wl1[0], &work[0], variant)
    return r


# ---- quantized mul on rows (include/qrt/qarith.h; qrt/ops/qarith.py) ------------------------
def mul_isa():
    """The QRT_ISA_* code of the quantized-mul variant this CPU runs."""
    return qrt_mul_isa()


def mul_rows_u8(const uint8_t[:, ::1] a, const uint8_t[::1] b, uint8_t[:, ::1] y,
                bint b_per_row, int za, int zb, float m, float lo, float hi, float zo,
                int variant=-1):
    """torch's quantized mul of a [rows, len] by b (one code per row, or [rows * len]).
    Large inputs run on the qrt pool's threads."""
    cdef size_t rows = a.shape[0], n = a.shape[1]
    if y.shape[0] != a.shape[0] or y.shape[1] != a.shape[1]:
        raise ValueError("mul_rows: the output shape differs from a's")
    if <size_t>b.shape[0] != (rows if b_per_row else rows * n):
        raise ValueError("mul_rows: b needs one code per row (b_per_row) or per element")
    if not (m == m and m - m == 0) or not lo <= hi:
        raise ValueError("mul_rows: the multiplier must be finite and lo <= hi")
    if rows == 0 or n == 0:
        return
    with nogil:
        qrt_mul_rows_u8_mt(&a[0, 0], &b[0], rows, n, b_per_row, za, zb, m, lo, hi, zo, &y[0, 0],
                           variant, qrt_pool_get_threads())
