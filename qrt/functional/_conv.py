# SPDX-License-Identifier: Apache-2.0
"""conv1d, linear and linear_dynamic (filled in by the conv work)."""

__all__ = []
