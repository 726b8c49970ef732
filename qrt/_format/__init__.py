# SPDX-License-Identifier: Apache-2.0
"""The ``.bin`` format in one place: :mod:`reader` (validation rules R1..Rn) and :mod:`writer`
(the only writer; qrt.save, qrt-export and the tests use it). docs/blob-format.md is normative.

Neither imports torch, the exporter, or the executor.
"""
