# SPDX-License-Identifier: Apache-2.0
"""Compatibility name: the writer lives in the runtime package, beside the reader
(:mod:`qrt._format.writer`). The exporter imports the runtime, never the other way round."""

from qrt._format.writer import BlobBuilder, OpDef, TensorDef  # noqa: F401
