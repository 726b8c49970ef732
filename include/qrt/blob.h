/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file blob.h
 * @brief In-file layout of qrt model blobs (`.bin`). Normative text: docs/blob-format.md.
 *
 * A blob is mmap'd and read in place, so every field is fixed-width, little-endian and
 * naturally aligned; -Wpadded must stay quiet on this file. Python never repeats these
 * numbers: qrt/_blob.pyx exposes them (constants, struct sizes, field offsets) to the
 * loader and to the exporter, which is the only writer.
 *
 * File = header | section table | sections (strings, tensors, operands, ops, io, meta) | data.
 */
#ifndef QRT_BLOB_H
#define QRT_BLOB_H

#include <assert.h>
#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "qrt blobs are little-endian; big-endian hosts are not supported"
#endif

#define QRT_BLOB_MAGIC         "QRTB" /**< bytes [0, 4) */
#define QRT_BLOB_VERSION_MAJOR 1u     /**< readers reject any other major */
#define QRT_BLOB_VERSION_MINOR                                                                     \
    2u                                 /**< the newest minor this reader knows; 1.1: tensor files,
                                         custom ops; 1.2: op attribute schemas, raw weights
                                         only, fused activations, optional sections
                                         (docs/blob-format.md, "Versions") */
#define QRT_BLOB_MIN_READER     100u   /**< qrt 0.1.0 is the first reader of format 1.0 */
#define QRT_BLOB_MIN_ALIGN      16u    /**< payload alignment floor (one NEON q-register) */
#define QRT_BLOB_MAX_ALIGN      65536u /**< payload alignment ceiling */
#define QRT_BLOB_MAX_ELEMS      (1ull << 40) /**< elements in one tensor, at most */
#define QRT_BLOB_ALIGN          64u          /**< alignment the exporter writes (a cache line) */
#define QRT_BLOB_MAX_SECTIONS   64u          /**< cap on section_count */
#define QRT_BLOB_MAX_TENSORS    1000000u     /**< cap on the tensor table */
#define QRT_BLOB_MAX_OPS        1000000u     /**< cap on the op table */
#define QRT_BLOB_MAX_NDIM       6u           /**< dims stored per tensor */
#define QRT_BLOB_MAX_ATTR_BYTES (1u << 20)   /**< cap on one op's JSON attributes */
#define QRT_BLOB_MAX_META_BYTES (1u << 20)   /**< cap on the metadata JSON */
#define QRT_BLOB_NONE           0xFFFFFFFFu  /**< "no tensor" in an index field */

/** Header flags. */
#define QRT_BLOB_FLAG_FIXED_BATCH 1u /**< the graph only runs at the exported batch size */
#define QRT_BLOB_FLAG_TENSORS                                                                      \
    2u /**< 1.1: a tensor file (qrt.save): constants only, no ops
                                          or IO; R23 */

/** Section kinds; each appears at most once. DATA is always the last bytes of the file. */
typedef enum {
    QRT_SECTION_STRINGS = 1,  /**< UTF-8 pool; names, JSON attributes (no terminators) */
    QRT_SECTION_TENSORS = 2,  /**< qrt_blob_tensor[count] */
    QRT_SECTION_OPERANDS = 3, /**< uint32_t[count]: tensor indices referenced by ops */
    QRT_SECTION_OPS = 4,      /**< qrt_blob_op[count], in execution order */
    QRT_SECTION_IO = 5,       /**< qrt_blob_io[count]: model inputs, then outputs */
    QRT_SECTION_META = 6,     /**< one UTF-8 JSON object (exporter, torch version, source) */
    QRT_SECTION_DATA = 7,     /**< weight payloads, each aligned to header.alignment */
} qrt_blob_section_kind;

/** 1.2: a section kind with this bit set is optional: a reader that does not know the kind
 * skips it (its bytes still count for the metadata CRC, placement and overlap rules). Kinds
 * without it are required knowledge: an unknown one is an error (R10). */
#define QRT_SECTION_OPTIONAL 0x100u

/** Element types of blob tensors (1..3: the quantized dtypes, qrt._tensor; the rest plain). */
typedef enum {
    QRT_BLOB_DTYPE_QUINT8 = 1,
    QRT_BLOB_DTYPE_QINT8 = 2,
    QRT_BLOB_DTYPE_QINT32 = 3,
    QRT_BLOB_DTYPE_F32 = 4,
    QRT_BLOB_DTYPE_S32 = 5,
    QRT_BLOB_DTYPE_U8 = 6,
    QRT_BLOB_DTYPE_S8 = 7,
    QRT_BLOB_DTYPE_F64 = 8,
    QRT_BLOB_DTYPE_S64 = 9,
    QRT_BLOB_DTYPE_S16 = 10,
    QRT_BLOB_DTYPE_U16 = 11,
    QRT_BLOB_DTYPE_U32 = 12,
    QRT_BLOB_DTYPE_COUNT = 13, /**< one past the last code */
} qrt_blob_dtype;

/** Quantization scheme of a tensor; values equal qrt.QScheme codes. */
typedef enum {
    QRT_BLOB_QSCHEME_NONE = 0,
    QRT_BLOB_QSCHEME_PER_TENSOR_AFFINE = 1,
    QRT_BLOB_QSCHEME_PER_CHANNEL_AFFINE = 2,
} qrt_blob_qscheme;

/** What a tensor is. */
typedef enum {
    QRT_BLOB_TENSOR_CONSTANT = 0,   /**< payload in DATA (weights, packed arrays) */
    QRT_BLOB_TENSOR_ACTIVATION = 1, /**< no payload; placed in the arena at load */
    QRT_BLOB_TENSOR_STATE = 2,      /**< 1.2: no payload; persists between calls (streaming
                                         windows, RNN state): zero at the first call, then
                                         what the one op that writes it left there */
} qrt_blob_tensor_kind;

/** Tensor flags. */
#define QRT_BLOB_TENSOR_BATCHED 1u /**< dims[0] is the batch dimension (scales with it) */

/** Operator codes (qrt_blob_op.kind) are defined with each op, once, in qrt/ops/ (the
 * `code` of its definition; append only, pinned by tests/test_op_registry.py). docs/ops.md
 * lists them. */

/** At offset 0. Grows only by appending fields before `reserved` and raising header_size.
 * Bytes [0, 52) (magic .. min_reader) keep their meaning in every major version, so any
 * reader can say which qrt a newer file needs. */
typedef struct {
    char magic[4];                 /**< QRT_BLOB_MAGIC, no NUL */
    uint16_t version_major;        /**< see QRT_BLOB_VERSION_MAJOR */
    uint16_t version_minor;        /**< see QRT_BLOB_VERSION_MINOR */
    uint32_t header_size;          /**< bytes, as written; >= 64; section table follows */
    uint32_t flags;                /**< QRT_BLOB_FLAG_* */
    uint32_t alignment;            /**< of every payload; power of two, >= QRT_BLOB_MIN_ALIGN */
    uint32_t section_count;        /**< entries in the section table */
    uint64_t section_table_offset; /**< == header_size */
    uint64_t file_size;            /**< total bytes; must equal the file's size */
    uint32_t meta_crc32;  /**< zlib CRC32 of bytes [0, data offset), both CRC fields as zero */
    uint32_t data_crc32;  /**< zlib CRC32 of the DATA section */
    uint32_t min_reader;  /**< oldest qrt that reads this file: major*10000 + minor*100 + patch */
    uint8_t reserved[12]; /**< zero; readers reject anything else */
} qrt_blob_header;

/** One section table entry. */
typedef struct {
    uint32_t kind;     /**< qrt_blob_section_kind */
    uint32_t reserved; /**< zero */
    uint64_t offset;   /**< from file start; multiple of 8 (of alignment for DATA) */
    uint64_t size;     /**< bytes */
    uint64_t count;    /**< entries (size / entry size), or 1 for STRINGS/META/DATA */
} qrt_blob_section;

/** One tensor table entry. Dims beyond ndim are zero. */
typedef struct {
    uint32_t name_offset;       /**< into STRINGS */
    uint32_t name_size;         /**< bytes, 1..255, UTF-8, unique */
    uint8_t dtype;              /**< qrt_blob_dtype */
    uint8_t qscheme;            /**< qrt_blob_qscheme */
    uint8_t ndim;               /**< 0..QRT_BLOB_MAX_NDIM */
    uint8_t kind;               /**< qrt_blob_tensor_kind */
    uint32_t flags;             /**< QRT_BLOB_TENSOR_* */
    int64_t dims[6];            /**< >= 0; activations at the exported batch size */
    double scale;               /**< per-tensor: > 0 and finite; else 0 */
    int64_t zero_point;         /**< per-tensor: inside the dtype's range; else 0 */
    uint64_t data_offset;       /**< constants: from DATA start, multiple of alignment */
    uint64_t nbytes;            /**< constants: prod(dims) * itemsize; activations: 0 */
    int32_t axis;               /**< per-channel: quantized axis; else 0 */
    uint32_t scales_index;      /**< per-channel: F64 constant [dims[axis]]; else QRT_BLOB_NONE */
    uint32_t zero_points_index; /**< per-channel: S64 constant [dims[axis]]; else NONE */
    uint32_t reserved[5];       /**< zero */
} qrt_blob_tensor;

/** One operator, executed in table order. Operand ranges index the OPERANDS section. */
typedef struct {
    uint32_t kind;        /**< qrt_blob_op_kind */
    uint32_t flags;       /**< zero */
    uint32_t name_offset; /**< into STRINGS: the source graph's node name */
    uint32_t name_size;
    uint32_t first_input; /**< activations read */
    uint32_t input_count;
    uint32_t first_output; /**< activations written (each exactly once in the graph) */
    uint32_t output_count;
    uint32_t first_param; /**< constants (packed arrays) */
    uint32_t param_count;
    uint32_t attrs_offset; /**< into STRINGS: a JSON object, <= QRT_BLOB_MAX_ATTR_BYTES */
    uint32_t attrs_size;
    uint32_t source_offset; /**< into STRINGS: source location, may be empty */
    uint32_t source_size;
    uint32_t reserved[2]; /**< zero */
} qrt_blob_op;

/** A model input or output. */
typedef struct {
    uint32_t tensor;    /**< activation tensor index */
    uint32_t direction; /**< 0 input, 1 output */
    uint32_t reserved[2];
} qrt_blob_io;

static_assert(sizeof(qrt_blob_header) == 64, "v1 header is exactly 64 bytes");
static_assert(sizeof(qrt_blob_section) == 32, "section entry is 32 bytes");
static_assert(sizeof(qrt_blob_tensor) == 128, "tensor entry is 128 bytes");
static_assert(sizeof(qrt_blob_op) == 64, "op entry is 64 bytes");
static_assert(sizeof(qrt_blob_io) == 16, "io entry is 16 bytes");

#endif /* QRT_BLOB_H */
