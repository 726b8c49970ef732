# SPDX-License-Identifier: Apache-2.0
"""custom: an op written in Python and registered with qrt.register_op (format 1.1, R24)."""

from __future__ import annotations

from qrt.ops._core import Obj, OpDef, Str, define


@define
class Custom(OpDef):
    name, code, since = "custom", 20, (1, 1)
    inputs = (1, None)
    doc = "user modules registered with qrt_export.register (qrt.register_op at run time)"
    attrs = {"op": Str(128), "attrs": Obj(default={})}

    def check_attrs(self, attrs, node_fail):
        if not isinstance(attrs, dict) or not isinstance(attrs.get("op"), str) or \
                not isinstance(attrs.get("attrs", {}), dict) or set(attrs) - {"op", "attrs"}:
            raise node_fail("custom op attributes must be {\"op\": <name>, \"attrs\": {...}}",
                            "R24")
        return super().check_attrs(attrs, node_fail)

    def prepare(self, node):
        from qrt import custom_ops
        return custom_ops.prepare(node)

    def infer(self, node, shapes):
        y = node.outputs[0]
        if y.batched and shapes[0] and node.inputs[0].batched:
            return [(shapes[0][0],) + tuple(y.shape[1:])]
        return [tuple(y.shape)]

    def bind(self, node, ins, outs):
        from qrt import custom_ops
        reg, attrs = node.state
        return custom_ops.binder(reg, attrs, node.outputs[0], node.attrs["op"]), \
            tuple(ins) + (outs[0],), {}

    def describe(self, attrs):
        return f"op={attrs.get('op')}"
