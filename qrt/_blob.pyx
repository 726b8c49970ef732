# SPDX-License-Identifier: Apache-2.0
"""The blob format's constants and struct layouts, read from include/qrt/blob.h.

The loader (qrt/loader.py) and the exporter (tools/qrt_export) take every number from here,
so the C header stays the single definition of the format.
"""

from libc.stdint cimport uint8_t, uint16_t, uint32_t, int32_t, int64_t, uint64_t

import numpy as np

cdef extern from "qrt/blob.h" nogil:
    const char* QRT_BLOB_MAGIC
    unsigned int QRT_BLOB_VERSION_MAJOR, QRT_BLOB_VERSION_MINOR, QRT_BLOB_MIN_ALIGN
    unsigned int QRT_BLOB_MIN_READER, QRT_BLOB_MAX_ALIGN
    unsigned long long QRT_BLOB_MAX_ELEMS
    unsigned int QRT_BLOB_ALIGN, QRT_BLOB_MAX_SECTIONS, QRT_BLOB_MAX_TENSORS, QRT_BLOB_MAX_OPS
    unsigned int QRT_BLOB_MAX_NDIM, QRT_BLOB_MAX_ATTR_BYTES, QRT_BLOB_MAX_META_BYTES
    unsigned int QRT_BLOB_NONE, QRT_BLOB_FLAG_FIXED_BATCH, QRT_BLOB_TENSOR_BATCHED
    unsigned int QRT_BLOB_FLAG_TENSORS, QRT_SECTION_OPTIONAL
    enum:
        QRT_SECTION_STRINGS, QRT_SECTION_TENSORS, QRT_SECTION_OPERANDS, QRT_SECTION_OPS
        QRT_SECTION_IO, QRT_SECTION_META, QRT_SECTION_DATA
    enum:
        QRT_BLOB_DTYPE_QUINT8, QRT_BLOB_DTYPE_QINT8, QRT_BLOB_DTYPE_QINT32, QRT_BLOB_DTYPE_F32
        QRT_BLOB_DTYPE_S32, QRT_BLOB_DTYPE_U8, QRT_BLOB_DTYPE_S8, QRT_BLOB_DTYPE_F64
        QRT_BLOB_DTYPE_S64, QRT_BLOB_DTYPE_S16, QRT_BLOB_DTYPE_U16, QRT_BLOB_DTYPE_U32
        QRT_BLOB_DTYPE_COUNT
    enum:
        QRT_BLOB_QSCHEME_NONE, QRT_BLOB_QSCHEME_PER_TENSOR_AFFINE
        QRT_BLOB_QSCHEME_PER_CHANNEL_AFFINE
    enum:
        QRT_BLOB_TENSOR_CONSTANT, QRT_BLOB_TENSOR_ACTIVATION, QRT_BLOB_TENSOR_STATE

    ctypedef struct qrt_blob_header:
        char magic[4]
        uint16_t version_major, version_minor
        uint32_t header_size, flags, alignment, section_count
        uint64_t section_table_offset, file_size
        uint32_t meta_crc32, data_crc32, min_reader
        uint8_t reserved[12]

    ctypedef struct qrt_blob_section:
        uint32_t kind, reserved
        uint64_t offset, size, count

    ctypedef struct qrt_blob_tensor:
        uint32_t name_offset, name_size
        uint8_t dtype, qscheme, ndim, kind
        uint32_t flags
        int64_t dims[6]
        double scale
        int64_t zero_point
        uint64_t data_offset, nbytes
        int32_t axis
        uint32_t scales_index, zero_points_index
        uint32_t reserved[5]

    ctypedef struct qrt_blob_op:
        uint32_t kind, flags, name_offset, name_size, first_input, input_count
        uint32_t first_output, output_count, first_param, param_count
        uint32_t attrs_offset, attrs_size, source_offset, source_size
        uint32_t reserved[2]

    ctypedef struct qrt_blob_io:
        uint32_t tensor, direction
        uint32_t reserved[2]

MAGIC = (<bytes>QRT_BLOB_MAGIC)[:4]
VERSION_MAJOR = QRT_BLOB_VERSION_MAJOR
VERSION_MINOR = QRT_BLOB_VERSION_MINOR
MIN_ALIGN = QRT_BLOB_MIN_ALIGN
MIN_READER = QRT_BLOB_MIN_READER
MAX_ALIGN = QRT_BLOB_MAX_ALIGN
MAX_ELEMS = QRT_BLOB_MAX_ELEMS
ALIGN = QRT_BLOB_ALIGN
MAX_SECTIONS = QRT_BLOB_MAX_SECTIONS
MAX_TENSORS = QRT_BLOB_MAX_TENSORS
MAX_OPS = QRT_BLOB_MAX_OPS
MAX_NDIM = QRT_BLOB_MAX_NDIM
MAX_ATTR_BYTES = QRT_BLOB_MAX_ATTR_BYTES
MAX_META_BYTES = QRT_BLOB_MAX_META_BYTES
NONE = QRT_BLOB_NONE
FLAG_FIXED_BATCH = QRT_BLOB_FLAG_FIXED_BATCH
FLAG_TENSORS = QRT_BLOB_FLAG_TENSORS
TENSOR_BATCHED = QRT_BLOB_TENSOR_BATCHED

SECTION = {"STRINGS": QRT_SECTION_STRINGS, "TENSORS": QRT_SECTION_TENSORS,
           "OPERANDS": QRT_SECTION_OPERANDS, "OPS": QRT_SECTION_OPS, "IO": QRT_SECTION_IO,
           "META": QRT_SECTION_META, "DATA": QRT_SECTION_DATA}
SECTION_NAMES = {v: k for k, v in SECTION.items()}
SECTION_OPTIONAL = QRT_SECTION_OPTIONAL

# dtype code -> (name, numpy dtype)
DTYPES = {
    QRT_BLOB_DTYPE_QUINT8: ("quint8", np.dtype("<u1")),
    QRT_BLOB_DTYPE_QINT8: ("qint8", np.dtype("<i1")),
    QRT_BLOB_DTYPE_QINT32: ("qint32", np.dtype("<i4")),
    QRT_BLOB_DTYPE_F32: ("float32", np.dtype("<f4")),
    QRT_BLOB_DTYPE_S32: ("int32", np.dtype("<i4")),
    QRT_BLOB_DTYPE_U8: ("uint8", np.dtype("<u1")),
    QRT_BLOB_DTYPE_S8: ("int8", np.dtype("<i1")),
    QRT_BLOB_DTYPE_F64: ("float64", np.dtype("<f8")),
    QRT_BLOB_DTYPE_S64: ("int64", np.dtype("<i8")),
    QRT_BLOB_DTYPE_S16: ("int16", np.dtype("<i2")),
    QRT_BLOB_DTYPE_U16: ("uint16", np.dtype("<u2")),
    QRT_BLOB_DTYPE_U32: ("uint32", np.dtype("<u4")),
}
DTYPE_COUNT = QRT_BLOB_DTYPE_COUNT
QUANTIZED_DTYPES = frozenset((QRT_BLOB_DTYPE_QUINT8, QRT_BLOB_DTYPE_QINT8, QRT_BLOB_DTYPE_QINT32))
DTYPE_CODE = {name: code for code, (name, _) in DTYPES.items()}

QSCHEME = {"none": QRT_BLOB_QSCHEME_NONE, "per_tensor_affine": QRT_BLOB_QSCHEME_PER_TENSOR_AFFINE,
           "per_channel_affine": QRT_BLOB_QSCHEME_PER_CHANNEL_AFFINE}
QSCHEME_NAMES = {v: k for k, v in QSCHEME.items()}
TENSOR_KIND = {"constant": QRT_BLOB_TENSOR_CONSTANT, "activation": QRT_BLOB_TENSOR_ACTIVATION,
               "state": QRT_BLOB_TENSOR_STATE}
TENSOR_KIND_NAMES = {v: k for k, v in TENSOR_KIND.items()}

# Op kind codes are defined with each op in qrt/ops (qrt.ops.BY_CODE / CODE_OF).


cdef size_t _off(const void* field, const void* base):
    return <size_t>(<const char*>field - <const char*>base)


cdef qrt_blob_header _h
cdef qrt_blob_section _s
cdef qrt_blob_tensor _t
cdef qrt_blob_op _o
cdef qrt_blob_io _i

HEADER_SIZE = sizeof(qrt_blob_header)
SECTION_SIZE = sizeof(qrt_blob_section)
TENSOR_SIZE = sizeof(qrt_blob_tensor)
OP_SIZE = sizeof(qrt_blob_op)
IO_SIZE = sizeof(qrt_blob_io)

# Little-endian numpy record types whose offsets come from the compiled structs.
HEADER_DTYPE = np.dtype({
    "names": ["magic", "version_major", "version_minor", "header_size", "flags", "alignment",
              "section_count", "section_table_offset", "file_size", "meta_crc32", "data_crc32",
              "min_reader", "reserved"],
    "formats": ["S4", "<u2", "<u2", "<u4", "<u4", "<u4", "<u4", "<u8", "<u8", "<u4", "<u4",
                "<u4", ("u1", 12)],
    "offsets": [_off(&_h.magic, &_h), _off(&_h.version_major, &_h),
                _off(&_h.version_minor, &_h), _off(&_h.header_size, &_h),
                _off(&_h.flags, &_h), _off(&_h.alignment, &_h), _off(&_h.section_count, &_h),
                _off(&_h.section_table_offset, &_h), _off(&_h.file_size, &_h),
                _off(&_h.meta_crc32, &_h), _off(&_h.data_crc32, &_h),
                _off(&_h.min_reader, &_h), _off(&_h.reserved, &_h)],
    "itemsize": sizeof(qrt_blob_header)})

SECTION_DTYPE = np.dtype({
    "names": ["kind", "reserved", "offset", "size", "count"],
    "formats": ["<u4", "<u4", "<u8", "<u8", "<u8"],
    "offsets": [_off(&_s.kind, &_s), _off(&_s.reserved, &_s), _off(&_s.offset, &_s),
                _off(&_s.size, &_s), _off(&_s.count, &_s)],
    "itemsize": sizeof(qrt_blob_section)})

TENSOR_DTYPE = np.dtype({
    "names": ["name_offset", "name_size", "dtype", "qscheme", "ndim", "kind", "flags", "dims",
              "scale", "zero_point", "data_offset", "nbytes", "axis", "scales_index",
              "zero_points_index", "reserved"],
    "formats": ["<u4", "<u4", "u1", "u1", "u1", "u1", "<u4", ("<i8", 6), "<f8", "<i8", "<u8",
                "<u8", "<i4", "<u4", "<u4", ("<u4", 5)],
    "offsets": [_off(&_t.name_offset, &_t), _off(&_t.name_size, &_t), _off(&_t.dtype, &_t),
                _off(&_t.qscheme, &_t), _off(&_t.ndim, &_t), _off(&_t.kind, &_t),
                _off(&_t.flags, &_t), _off(&_t.dims, &_t), _off(&_t.scale, &_t),
                _off(&_t.zero_point, &_t), _off(&_t.data_offset, &_t), _off(&_t.nbytes, &_t),
                _off(&_t.axis, &_t), _off(&_t.scales_index, &_t),
                _off(&_t.zero_points_index, &_t), _off(&_t.reserved, &_t)],
    "itemsize": sizeof(qrt_blob_tensor)})

_OP_FIELDS = ["kind", "flags", "name_offset", "name_size", "first_input", "input_count",
              "first_output", "output_count", "first_param", "param_count", "attrs_offset",
              "attrs_size", "source_offset", "source_size"]
OP_DTYPE = np.dtype({
    "names": _OP_FIELDS + ["reserved"],
    "formats": ["<u4"] * len(_OP_FIELDS) + [("<u4", 2)],
    "offsets": [_off(&_o.kind, &_o), _off(&_o.flags, &_o), _off(&_o.name_offset, &_o),
                _off(&_o.name_size, &_o), _off(&_o.first_input, &_o),
                _off(&_o.input_count, &_o), _off(&_o.first_output, &_o),
                _off(&_o.output_count, &_o), _off(&_o.first_param, &_o),
                _off(&_o.param_count, &_o), _off(&_o.attrs_offset, &_o),
                _off(&_o.attrs_size, &_o), _off(&_o.source_offset, &_o),
                _off(&_o.source_size, &_o), _off(&_o.reserved, &_o)],
    "itemsize": sizeof(qrt_blob_op)})

IO_DTYPE = np.dtype({
    "names": ["tensor", "direction", "reserved"],
    "formats": ["<u4", "<u4", ("<u4", 2)],
    "offsets": [_off(&_i.tensor, &_i), _off(&_i.direction, &_i), _off(&_i.reserved, &_i)],
    "itemsize": sizeof(qrt_blob_io)})

# Byte offsets of the two CRC fields (zeroed while the metadata CRC is computed).
CRC_FIELDS = (_off(&_h.meta_crc32, &_h), _off(&_h.data_crc32, &_h))
