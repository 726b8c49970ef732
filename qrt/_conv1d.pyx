# SPDX-License-Identifier: Apache-2.0
"""Thin wrapper over include/qrt/conv1d.h. Shapes are checked here, semantics in the C gate."""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t

from qrt._kernels cimport *

MAX_TAPS = QRT_CONV1D_MAX_TAPS
OUT_U8 = QRT_CONV1D_OUT_U8
OUT_F32 = QRT_CONV1D_OUT_F32

ctypedef fused out_t:
    uint8_t
    float


def isa():
    """The QRT_ISA_* code of the conv1d variant this CPU runs."""
    return qrt_conv1d_isa()


def variant(int requested=-1):
    """The QRT_ISA_* code a call with ``variant=requested`` runs (0 forces the reference)."""
    return qrt_conv1d_variant(requested)


def layout(uint32_t cg, uint32_t kernel):
    """(im2col, kc, cq) of the packed weight for c_in/groups = cg and this kernel."""
    cdef qrt_conv1d_layout l = qrt_conv1d_layout_of(cg, kernel)
    return int(l.im2col), int(l.kc), int(l.cq)


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
    p.kernel, p.stride, p.dilation, p.pad_left, p.groups = kernel, stride, dilation, pad_left, groups
    return 0


def scratch_size(Py_ssize_t n, Py_ssize_t c_in, Py_ssize_t c_out, Py_ssize_t len_in,
                 Py_ssize_t len_out, Py_ssize_t kernel, Py_ssize_t stride, Py_ssize_t dilation,
                 Py_ssize_t pad_left, Py_ssize_t groups, int variant=-1):
    """Scratch bytes conv1d() needs for this geometry."""
    cdef qrt_conv1d_params p
    _fill(&p, n, c_in, c_out, len_in, len_out, kernel, stride, dilation, pad_left, groups)
    return qrt_conv1d_u8_scratch_size(&p, variant)


def conv1d(const uint8_t[:, :, :] x, const int8_t[:, :, ::1] w, const int8_t[::1] wpack,
           const int32_t[::1] wsum, const int32_t[::1] weight_zero, const int32_t[::1] bias_q,
           const float[::1] scale, const float[::1] bias_f, out_t[:, :, :] out,
           uint8_t[::1] scratch, *, Py_ssize_t stride=1, Py_ssize_t dilation=1,
           Py_ssize_t pad_left=0, Py_ssize_t groups=1, int input_zero=0, int output_zero=0,
           int output_min=0, int output_max=255, int variant=-1):
    """out[n, oc, t] = conv1d of x [n, c, t] (any strides) with w [c_out, c_in/groups, K].

    ``out`` is uint8 (static requantization: bias_q, scale = requant scale) or float32
    (dynamic: scale = output scale, bias_f).  ``w`` is read by the reference, ``wpack``/``wsum``
    by the dot-product variants; ``variant=0`` forces the reference.
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
    cdef size_t need = qrt_conv1d_u8_scratch_size(&p, variant)
    cdef void *sp = NULL
    cdef const int8_t *wp = NULL
    if st == QRT_OK:
        if <size_t>scratch.shape[0] < need:
            raise ValueError(f"conv1d: scratch has {scratch.shape[0]} bytes, needs {need}")
        if need and <size_t>wpack.shape[0] != qrt_conv1d_packed_weight_size(c_out, c_in // groups,
                                                                             kernel):
            raise ValueError("conv1d: packed weight does not match the geometry")
        if scratch.shape[0]:
            sp = &scratch[0]
        if wpack.shape[0]:
            wp = &wpack[0]
        q.weight_zero, q.bias_q = &weight_zero[0], &bias_q[0]
        q.scale, q.bias_f = &scale[0], &bias_f[0]
        with nogil:
            st = qrt_conv1d_u8(&p, &x[0, 0, 0], &w[0, 0, 0], wp, &wsum[0], &q,
                               <void *>&out[0, 0, 0], sp, scratch.shape[0], variant)
    if st == QRT_ERR_OVERFLOW:
        raise ValueError(f"conv1d: {c_in // groups} x {kernel} taps per output exceed the int32 "
                         f"accumulation bound ({QRT_CONV1D_MAX_TAPS}) or a size is too large")
    if st != QRT_OK:
        raise ValueError(f"qrt_conv1d_u8 rejected its arguments (status {st})")
