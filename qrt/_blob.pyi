from typing import Dict, FrozenSet, Tuple
import numpy as np

MAGIC: bytes
VERSION_MAJOR: int
VERSION_MINOR: int
MIN_ALIGN: int
MIN_READER: int
MAX_ALIGN: int
MAX_ELEMS: int
ALIGN: int
MAX_SECTIONS: int
MAX_TENSORS: int
MAX_OPS: int
MAX_NDIM: int
MAX_ATTR_BYTES: int
MAX_META_BYTES: int
NONE: int
FLAG_FIXED_BATCH: int
FLAG_TENSORS: int
TENSOR_BATCHED: int
SECTION: Dict[str, int]
SECTION_NAMES: Dict[int, str]
SECTION_OPTIONAL: int
DTYPES: Dict[int, Tuple[str, np.dtype]]
DTYPE_COUNT: int
DTYPE_CODE: Dict[str, int]
QUANTIZED_DTYPES: FrozenSet[int]
QSCHEME: Dict[str, int]
QSCHEME_NAMES: Dict[int, str]
TENSOR_KIND: Dict[str, int]
TENSOR_KIND_NAMES: Dict[int, str]
HEADER_SIZE: int
SECTION_SIZE: int
TENSOR_SIZE: int
OP_SIZE: int
IO_SIZE: int
HEADER_DTYPE: np.dtype
SECTION_DTYPE: np.dtype
TENSOR_DTYPE: np.dtype
OP_DTYPE: np.dtype
IO_DTYPE: np.dtype
CRC_FIELDS: Tuple[int, int]
