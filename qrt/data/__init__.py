# SPDX-License-Identifier: Apache-2.0
"""Data shipped with qrt: the demo model (demo.bin, its golden) and its synthetic data set."""

import os as _os


def path(name: str) -> str:
    """Absolute path of a file shipped in qrt/data."""
    return _os.path.join(_os.path.dirname(__file__), name)
