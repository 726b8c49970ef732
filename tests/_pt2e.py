# SPDX-License-Identifier: Apache-2.0
"""pt2e helpers for tests/test_export_pt2e.py: the quantize flows of torchao's docs, and an
XNNPACK-style quantizer (torchao 0.18 no longer ships XNNPACKQuantizer, which moved to
executorch): the same annotations as its symmetric config (int8 activations, asymmetric or
symmetric; int8 weights symmetric in [-127, 127], per channel or per tensor; conv/linear
fused with a following relu / relu6 / hardtanh; add(+relu); shared qparams for pooling, cat,
flatten/view), for 1-d and 2-d convs and pools."""

import warnings

import torch

warnings.filterwarnings("ignore", message=".*torch.ao.quantization.*")

A = torch.ops.aten


def _specs(per_channel=True, symmetric_act=False, qat=False):
    from torchao.quantization.pt2e.fake_quantize import FusedMovingAvgObsFakeQuantize
    from torchao.quantization.pt2e.observer import (
        HistogramObserver, MinMaxObserver, MovingAverageMinMaxObserver,
        MovingAveragePerChannelMinMaxObserver, PerChannelMinMaxObserver)
    from torchao.quantization.pt2e.quantizer import QuantizationSpec
    extra = {"eps": 2 ** -12}
    if qat:
        act_ctr = FusedMovingAvgObsFakeQuantize.with_args(observer=MovingAverageMinMaxObserver,
                                                           **extra)
        w_ctr = FusedMovingAvgObsFakeQuantize.with_args(
            observer=MovingAveragePerChannelMinMaxObserver if per_channel else
            MovingAverageMinMaxObserver, **extra)
    else:
        act_ctr = HistogramObserver.with_args(**extra)
        w_ctr = (PerChannelMinMaxObserver if per_channel else MinMaxObserver).with_args(**extra)
    act = QuantizationSpec(dtype=torch.int8, quant_min=-128, quant_max=127,
                           qscheme=torch.per_tensor_symmetric if symmetric_act else
                           torch.per_tensor_affine, is_dynamic=False,
                           observer_or_fake_quant_ctr=act_ctr)
    w = QuantizationSpec(dtype=torch.int8, quant_min=-127, quant_max=127,
                         qscheme=torch.per_channel_symmetric if per_channel else
                         torch.per_tensor_symmetric, ch_axis=0, is_dynamic=False,
                         observer_or_fake_quant_ctr=w_ctr)
    return act, w


def xnnpack_style_quantizer(per_channel=True, symmetric_act=False, qat=False):
    from torchao.quantization.pt2e.quantizer import (QuantizationAnnotation, Quantizer,
                                                      SharedQuantizationSpec)
    act, wspec = _specs(per_channel, symmetric_act, qat)
    wt_spec = _specs(False, symmetric_act, qat)[1]   # a transposed conv: per tensor
    layer = (A.conv1d.default, A.conv2d.default, A.linear.default, A.conv_transpose1d.default)
    binary = (A.add.Tensor, A.mul.Tensor)
    shared = (A.max_pool1d.default, A.adaptive_avg_pool1d.default, A.flatten.using_ints,
              A.view.default, A.avg_pool1d.default, A.mean.dim, A.max_pool2d.default,
              A.avg_pool2d.default, A.adaptive_avg_pool2d.default)
    relus = (A.relu.default, A.hardtanh.default, A.relu_.default)

    def ann(n, inputs, out):
        n.meta["quantization_annotation"] = QuantizationAnnotation(
            input_qspec_map=inputs, output_qspec=out, _annotated=True)

    class XNNPACKStyleQuantizer(Quantizer):
        def annotate(self, gm):
            for n in gm.graph.nodes:
                if n.op != "call_function" or "quantization_annotation" in n.meta:
                    continue
                users = list(n.users)
                relu = users[0] if len(users) == 1 and users[0].target in relus else None
                if n.target in layer or n.target in binary:
                    if n.target == A.conv_transpose1d.default:  # weights per tensor
                        inputs = {n.args[0]: act, n.args[1]: wt_spec}
                    elif n.target in layer:
                        inputs = {n.args[0]: act, n.args[1]: wspec}
                    else:
                        if not all(hasattr(a, "op") for a in n.args[:2]):
                            continue
                        inputs = {n.args[0]: act, n.args[1]: act}
                    if relu is not None:
                        ann(n, inputs, None)
                        ann(relu, {}, act)
                    else:
                        ann(n, inputs, act)
                elif n.target in relus:
                    ann(n, {n.args[0]: act}, act)
                elif n.target in shared:
                    x = n.args[0]
                    ann(n, {x: act}, SharedQuantizationSpec((x, n)))
                elif n.target == A.cat.default:
                    xs = n.args[0]
                    ann(n, {x: act for x in xs}, act)
            return gm

        def validate(self, gm):
            pass
    return XNNPACKStyleQuantizer()


def x86_quantizer(qat=False):
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer, get_default_x86_inductor_quantization_config)
    q = X86InductorQuantizer()
    q.set_global(get_default_x86_inductor_quantization_config(is_qat=qat))
    return q


def arm_quantizer(qat=False):
    from torchao.quantization.pt2e.quantizer.arm_inductor_quantizer import (
        ArmInductorQuantizer, get_default_arm_inductor_quantization_config)
    q = ArmInductorQuantizer()
    q.set_global(get_default_arm_inductor_quantization_config(is_qat=qat))
    return q


QUANTIZERS = {"x86": x86_quantizer, "arm": arm_quantizer,
              "xnnpack": lambda qat=False: xnnpack_style_quantizer(qat=qat),
              "xnnpack_per_tensor": lambda qat=False: xnnpack_style_quantizer(False, qat=qat),
              "xnnpack_symmetric": lambda qat=False: xnnpack_style_quantizer(True, True, qat)}


def pt2e_quantize(model, example, quantizer, calibration, qat=False, dynamic_shapes=None,
                  strict=False):
    """torchao's documented flow: export, prepare(_qat)_pt2e, calibrate, convert_pt2e.
    ``strict=True`` for a model that calls one activation module twice (torchvision's ResNet
    BasicBlock ``self.relu``) under X86InductorQuantizer: torch 2.13's non-strict export
    records no ``source_fn_stack``, the quantizer's partitions then group nodes by module
    name, and the two calls make one ReLU partition with two outputs ("Input partition has
    more than one output node")."""
    from torchao.quantization.pt2e.quantize_pt2e import (convert_pt2e, prepare_pt2e,
                                                         prepare_qat_pt2e)
    if qat:
        gm = torch.export.export(model.train(), example, dynamic_shapes=dynamic_shapes,
                                 strict=strict).module()
        p = prepare_qat_pt2e(gm, quantizer)
        opt = torch.optim.SGD(p.parameters(), lr=1e-3)
        for x in calibration:   # a few QAT steps
            opt.zero_grad()
            p(x).float().pow(2).mean().backward()
            opt.step()
        from torchao.quantization.pt2e import move_exported_model_to_eval
        move_exported_model_to_eval(p)
    else:
        gm = torch.export.export(model.eval(), example, dynamic_shapes=dynamic_shapes,
                                 strict=strict).module()
        p = prepare_pt2e(gm, quantizer)
    with torch.no_grad():
        for x in calibration:
            p(x)
    return convert_pt2e(p)


class TCResBlock(torch.nn.Module):
    """TC-ResNet block (Choi et al., Interspeech 2019): temporal convs over MFCC channels,
    conv-BN-ReLU-conv-BN plus a (strided 1x1 conv-BN-ReLU) shortcut, ReLU after the add."""

    def __init__(self, c_in, c_out, stride):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv1d(c_in, c_out, 9, stride=stride, padding=4, bias=False)
        self.bn1 = nn.BatchNorm1d(c_out)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv1d(c_out, c_out, 9, padding=4, bias=False)
        self.bn2 = nn.BatchNorm1d(c_out)
        self.short = nn.Sequential(nn.Conv1d(c_in, c_out, 1, stride=stride, bias=False),
                                   nn.BatchNorm1d(c_out), nn.ReLU()) \
            if stride != 1 or c_in != c_out else nn.Identity()
        self.relu2 = nn.ReLU()

    def forward(self, x):
        y = self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x)))))
        return self.relu2(y + self.short(x))


class TCResNet8(torch.nn.Module):
    """TC-ResNet8: 40 MFCC channels in, 12 keywords out (width multiplier ``k``)."""

    def __init__(self, n_mfcc=40, n_classes=12, k=1.0):
        super().__init__()
        nn = torch.nn
        c = [int(16 * k), int(24 * k), int(32 * k), int(48 * k)]
        self.conv = nn.Conv1d(n_mfcc, c[0], 3, padding=1, bias=False)
        self.blocks = nn.Sequential(TCResBlock(c[0], c[1], 2), TCResBlock(c[1], c[2], 2),
                                    TCResBlock(c[2], c[3], 2))
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(c[3], n_classes)

    def forward(self, x):
        x = self.pool(self.blocks(self.conv(x)))
        return self.fc(torch.flatten(x, 1))


# ---- the patterns users hit (issue #44): one small model each, (constructor, input shape) ------
_nn = torch.nn
F = torch.nn.functional


class LinearReLU(_nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = _nn.Linear(16, 12), _nn.Linear(12, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def conv_bn_relu(d):
    C, B = (_nn.Conv1d, _nn.BatchNorm1d) if d == 1 else (_nn.Conv2d, _nn.BatchNorm2d)
    return _nn.Sequential(C(3, 8, 3, padding=1), B(8), _nn.ReLU(), C(8, 4, 1))


class AddReLU(_nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = _nn.Conv2d(3, 4, 3, padding=1), _nn.Conv2d(3, 4, 1)

    def forward(self, x):
        return torch.relu(self.a(x) + self.b(x))


class Cat(_nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = _nn.Conv2d(3, 4, 3, padding=1), _nn.Conv2d(3, 4, 1)
        self.c = _nn.Conv2d(8, 4, 1)

    def forward(self, x):
        return self.c(torch.cat([self.a(x), self.b(x)], 1))


class Pools(_nn.Module):
    """max_pool2d, avg_pool2d, adaptive_avg_pool2d, flatten."""

    def __init__(self):
        super().__init__()
        self.a = _nn.Conv2d(3, 4, 3, padding=1)
        self.c = _nn.Conv2d(4, 4, 1)

    def forward(self, x):
        y = F.max_pool2d(self.a(x), 2)
        y = F.avg_pool2d(y, 3, 1, 1)
        y = self.c(y)
        return F.adaptive_avg_pool2d(y, 1).flatten(1)


class Act(_nn.Module):
    """conv -> ``f`` (hardswish, group_norm...) -> conv."""

    def __init__(self, f):
        super().__init__()
        self.a, self.f, self.c = _nn.Conv2d(3, 4, 3, padding=1), f, _nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.c(self.f(self.a(x)))


class Up(_nn.Module):
    """conv -> F.interpolate(**kw) -> conv."""

    def __init__(self, **kw):
        super().__init__()
        self.kw = kw
        self.a, self.c = _nn.Conv2d(3, 4, 3, padding=1), _nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.c(F.interpolate(self.a(x), **self.kw))


class LN(_nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.ln, self.fc2 = _nn.Linear(16, 12), _nn.LayerNorm(12), _nn.Linear(12, 4)

    def forward(self, x):
        return self.fc2(self.ln(self.fc1(x)))


class Softmax(_nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = _nn.Linear(16, 12), _nn.Linear(12, 4)

    def forward(self, x):
        return self.fc2(torch.softmax(self.fc1(x), -1))


PATTERNS = {  # name: (constructor, input shape)
    "linear_relu": (LinearReLU, (2, 16)),
    "conv_bn_relu1d": (lambda: conv_bn_relu(1), (1, 3, 32)),
    "conv_bn_relu2d": (lambda: conv_bn_relu(2), (1, 3, 16, 16)),
    "add_relu": (AddReLU, (1, 3, 16, 16)),
    "cat": (Cat, (1, 3, 16, 16)),
    "pools": (Pools, (1, 3, 16, 16)),
    "hardswish": (lambda: Act(_nn.Hardswish()), (1, 3, 16, 16)),
    "upsample_nearest_scale": (lambda: Up(scale_factor=2, mode="nearest"), (1, 3, 8, 8)),
    "upsample_nearest_size": (lambda: Up(size=(12, 10), mode="nearest"), (1, 3, 8, 8)),
    "upsample_bilinear_scale": (lambda: Up(scale_factor=2, mode="bilinear"), (1, 3, 8, 8)),
    "upsample_bilinear_size": (lambda: Up(size=(12, 10), mode="bilinear",
                                          align_corners=True), (1, 3, 8, 8)),
    "group_norm": (lambda: Act(_nn.GroupNorm(2, 4)), (1, 3, 16, 16)),
    "layer_norm": (LN, (2, 16)),
    "softmax": (Softmax, (2, 16)),
}


def pattern_program(name, quantizer, qat=False, seed=0):
    """(converted program, example inputs) of PATTERNS[name] under QUANTIZERS[quantizer]."""
    ctor, shape = PATTERNS[name]
    torch.manual_seed(seed)
    m = ctor()
    g = torch.Generator().manual_seed(seed + 1)
    ex = (torch.randn(*shape, generator=g),)
    calib = [torch.randn(*shape, generator=g) for _ in range(2)]
    return pt2e_quantize(m, ex, QUANTIZERS[quantizer](qat=qat), calib, qat=qat), ex
