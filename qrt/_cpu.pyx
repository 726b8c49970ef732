# SPDX-License-Identifier: Apache-2.0
# cython: language_level=3
"""CPU features qrt detected at run time and the kernel variant each family dispatches to."""

from qrt._kernels cimport (QRT_CPU_AVX2, QRT_CPU_AVX512VNNI, QRT_CPU_DOTPROD, QRT_CPU_NEON,
                           QRT_ISA_COUNT, qrt_conv1d_isa, qrt_cpu_features,
                           qrt_cpu_features_raw, qrt_isa_name, qrt_quant_isa)
from qrt._ops_kernels cimport qrt_activation_isa, qrt_add_isa, qrt_pool1d_isa

cdef extern from "qrt/dwconv2d.h":
    int qrt_dwconv2d_isa()

cdef extern from *:
    """
    #if defined(__aarch64__)
    #define QRT__COMPILED_FOR "aarch64"
    #elif defined(__arm__)
    #define QRT__COMPILED_FOR "armv7"
    #elif defined(__x86_64__)
    #define QRT__COMPILED_FOR "x86_64"
    #else
    #define QRT__COMPILED_FOR "other"
    #endif
    #ifdef QRT_FORCE_REF
    #define QRT__FORCE_REF 1
    #else
    #define QRT__FORCE_REF 0
    #endif
    """
    const char *QRT__COMPILED_FOR
    int QRT__FORCE_REF

# QRT_ISA_* code -> name, from the one table in src/cpu.c (qrt_isa_name).
_ISA_NAMES = {v: qrt_isa_name(v).decode() for v in range(QRT_ISA_COUNT)}

compiled_for = QRT__COMPILED_FOR.decode()
"""Architecture these extensions were compiled for: aarch64, armv7, x86_64 or other."""

force_ref = bool(QRT__FORCE_REF)
"""True when qrt was built with -Dsimd=ref (reference kernels only)."""


def _as_dict(unsigned f):
    return {"neon": bool(f & QRT_CPU_NEON), "dotprod": bool(f & QRT_CPU_DOTPROD),
            "avx2": bool(f & QRT_CPU_AVX2), "avx512vnni": bool(f & QRT_CPU_AVX512VNNI)}


def features(raw=False):
    """CPU features qrt uses, as ``{"neon", "dotprod", "avx2", "avx512vnni"} -> bool``.

    Parameters
    ----------
    raw : bool
        If True, what the hardware reports (AT_HWCAP on Arm, cpuid on x86), ignoring the
        ``QRT_DISABLE_ISA`` environment variable; otherwise what the kernels may use.
    """
    return _as_dict(qrt_cpu_features_raw() if raw else qrt_cpu_features())


def selected():
    """Kernel variant each family runs on this CPU: ``{family: "ref" | "avx2" | ...}``."""
    return {
        "quantize": _ISA_NAMES[qrt_quant_isa()],
        "conv1d": _ISA_NAMES[qrt_conv1d_isa()],
        "add": _ISA_NAMES[qrt_add_isa()],
        "activation": _ISA_NAMES[qrt_activation_isa()],
        "pool1d": _ISA_NAMES[qrt_pool1d_isa()],
        "dwconv2d": _ISA_NAMES[qrt_dwconv2d_isa()],
    }
