# SPDX-License-Identifier: Apache-2.0
"""1-D models as their authors published them (forward methods copied), for the end-to-end
export tests (tests/test_models_1d.py). torch is needed; nothing here is imported by qrt."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class M5(nn.Module):
    """torchaudio's speech-commands tutorial network (forward verbatim)."""

    def __init__(self, n_input=1, n_output=35, stride=16, n_channel=32):
        super().__init__()
        self.conv1 = nn.Conv1d(n_input, n_channel, kernel_size=80, stride=stride)
        self.bn1 = nn.BatchNorm1d(n_channel)
        self.pool1 = nn.MaxPool1d(4)
        self.conv2 = nn.Conv1d(n_channel, n_channel, kernel_size=3)
        self.bn2 = nn.BatchNorm1d(n_channel)
        self.pool2 = nn.MaxPool1d(4)
        self.conv3 = nn.Conv1d(n_channel, 2 * n_channel, kernel_size=3)
        self.bn3 = nn.BatchNorm1d(2 * n_channel)
        self.pool3 = nn.MaxPool1d(4)
        self.conv4 = nn.Conv1d(2 * n_channel, 2 * n_channel, kernel_size=3)
        self.bn4 = nn.BatchNorm1d(2 * n_channel)
        self.pool4 = nn.MaxPool1d(4)
        self.fc1 = nn.Linear(2 * n_channel, n_output)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(self.bn1(x))
        x = self.pool1(x)
        x = self.conv2(x)
        x = F.relu(self.bn2(x))
        x = self.pool2(x)
        x = self.conv3(x)
        x = F.relu(self.bn3(x))
        x = self.pool3(x)
        x = self.conv4(x)
        x = F.relu(self.bn4(x))
        x = self.pool4(x)
        x = F.avg_pool1d(x, x.shape[-1])
        x = x.permute(0, 2, 1)
        x = self.fc1(x)
        return F.log_softmax(x, dim=2)


class AutoEncoder1d(nn.Module):
    """A Conv1d / ConvTranspose1d autoencoder in the common tutorial shape."""

    def __init__(self, c=1):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(c, 16, 7, stride=2, padding=3), nn.ReLU(),
            nn.Conv1d(16, 32, 5, stride=2, padding=2), nn.ReLU(),
            nn.Conv1d(32, 64, 3, stride=2, padding=1), nn.ReLU())
        self.decoder = nn.Sequential(
            nn.ConvTranspose1d(64, 32, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.ConvTranspose1d(32, 16, 5, stride=2, padding=2, output_padding=1), nn.ReLU(),
            nn.ConvTranspose1d(16, c, 7, stride=2, padding=3, output_padding=1))

    def forward(self, x):
        return self.decoder(self.encoder(x))


class ECGBlock(nn.Module):
    """Hannun et al. 2019 (Nature Medicine) residual block (kernel 16 there; odd here so that
    'same' padding keeps the length), pre-activation order:
    BN -> ReLU -> Dropout -> Conv -> BN -> ReLU -> Dropout -> Conv, MaxPool shortcut when the
    block subsamples, zero-padded channels when the width grows (here a 1x1 conv)."""

    def __init__(self, c_in, c_out, k=15, stride=1, first=False, dropout=0.2):
        super().__init__()
        self.first = first
        self.bn1 = nn.BatchNorm1d(c_in)
        self.relu1 = nn.ReLU()
        self.drop1 = nn.Dropout(dropout)
        self.conv1 = nn.Conv1d(c_in, c_out, k, stride=stride, padding=k // 2)
        self.bn2 = nn.BatchNorm1d(c_out)
        self.relu2 = nn.ReLU()
        self.drop2 = nn.Dropout(dropout)
        self.conv2 = nn.Conv1d(c_out, c_out, k, padding=k // 2)
        self.pool = nn.MaxPool1d(stride, ceil_mode=True) if stride > 1 else nn.Identity()
        self.proj = nn.Conv1d(c_in, c_out, 1) if c_in != c_out else nn.Identity()
        self.add = torch.ao.nn.quantized.FloatFunctional()

    def forward(self, x):
        shortcut = self.proj(self.pool(x))
        out = x if self.first else self.drop1(self.relu1(self.bn1(x)))
        out = self.conv1(out)
        out = self.drop2(self.relu2(self.bn2(out)))
        out = self.conv2(out)
        return self.add.add(out, shortcut)


class ECGResNet(nn.Module):
    """A small Hannun-style network: stem conv-BN-ReLU, pre-activation blocks, BN-ReLU,
    global pooling over time, Linear (the published model is 34 layers, 12 classes; fewer
    and narrower here to keep the tests fast)."""

    def __init__(self, n_classes=12, width=16, k=15):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(1, width, k, padding=k // 2),
                                  nn.BatchNorm1d(width), nn.ReLU())
        self.blocks = nn.Sequential(
            ECGBlock(width, width, k, first=True), ECGBlock(width, width, k, stride=2),
            ECGBlock(width, 2 * width, k), ECGBlock(2 * width, 2 * width, k, stride=2))
        self.bn = nn.BatchNorm1d(2 * width)
        self.relu = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(2 * width, n_classes)

    def forward(self, x):
        x = self.relu(self.bn(self.blocks(self.stem(x))))
        return self.fc(torch.flatten(self.pool(x), 1))


# ---- locuslab TCN (https://github.com/locuslab/TCN, TCN/tcn.py), as published ----------------
# Bai, Kolter, Koltun 2018. The classes below are the repository's, unchanged (weight_norm is
# the old hook-based torch.nn.utils.weight_norm, as there); ``parametrize_weight_norm`` turns
# a built model into the same model with torch.nn.utils.parametrizations.weight_norm.
from torch.nn.utils import weight_norm  # noqa: E402


class Chomp1d(nn.Module):
    def __init__(self, chomp_size):
        super(Chomp1d, self).__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, :-self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    def __init__(self, n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout=0.2):
        super(TemporalBlock, self).__init__()
        self.conv1 = weight_norm(nn.Conv1d(n_inputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp1 = Chomp1d(padding)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(dropout)

        self.conv2 = weight_norm(nn.Conv1d(n_outputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp2 = Chomp1d(padding)
        self.relu2 = nn.ReLU()
        self.dropout2 = nn.Dropout(dropout)

        self.net = nn.Sequential(self.conv1, self.chomp1, self.relu1, self.dropout1,
                                 self.conv2, self.chomp2, self.relu2, self.dropout2)
        self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
        self.relu = nn.ReLU()
        self.init_weights()

    def init_weights(self):
        self.conv1.weight.data.normal_(0, 0.01)
        self.conv2.weight.data.normal_(0, 0.01)
        if self.downsample is not None:
            self.downsample.weight.data.normal_(0, 0.01)

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(out + res)


class TemporalConvNet(nn.Module):
    def __init__(self, num_inputs, num_channels, kernel_size=2, dropout=0.2):
        super(TemporalConvNet, self).__init__()
        layers = []
        num_levels = len(num_channels)
        for i in range(num_levels):
            dilation_size = 2 ** i
            in_channels = num_inputs if i == 0 else num_channels[i-1]
            out_channels = num_channels[i]
            layers += [TemporalBlock(in_channels, out_channels, kernel_size, stride=1,
                                     dilation=dilation_size,
                                     padding=(kernel_size-1) * dilation_size, dropout=dropout)]

        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


def parametrize_weight_norm(model):
    """The same model with every hook-based weight_norm replaced by
    torch.nn.utils.parametrizations.weight_norm (same g and v, same computed weight)."""
    from torch.nn.utils import parametrizations, remove_weight_norm
    from torch.nn.utils.weight_norm import WeightNorm
    for m in list(model.modules()):
        hooks = [h for h in m._forward_pre_hooks.values() if isinstance(h, WeightNorm)]
        for h in hooks:
            g = getattr(m, h.name + "_g").detach().clone()
            v = getattr(m, h.name + "_v").detach().clone()
            remove_weight_norm(m, h.name)
            parametrizations.weight_norm(m, h.name, dim=h.dim)
            with torch.no_grad():
                p = m.parametrizations[h.name]
                p.original0.copy_(g)
                p.original1.copy_(v)
    return model


# ---- a channels-last IMU classifier -------------------------------------------------------------
class IMUNet(nn.Module):
    """Human-activity recognition from a 6-axis IMU as such models are commonly written: the
    input is channels-last [N, T, C] (time-major windows from the sensor), transposed inside;
    depthwise-separable blocks (depthwise Conv1d + BN + ReLU, pointwise Conv1d + BN + ReLU),
    max pooling, global average pooling, Linear classifier."""

    def __init__(self, n_axes=6, n_classes=6, width=32):
        super().__init__()
        self.dw1 = nn.Conv1d(n_axes, n_axes, 5, padding=2, groups=n_axes, bias=False)
        self.bn1 = nn.BatchNorm1d(n_axes)
        self.relu1 = nn.ReLU()
        self.pw1 = nn.Conv1d(n_axes, width, 1, bias=False)
        self.bn2 = nn.BatchNorm1d(width)
        self.relu2 = nn.ReLU()
        self.pool = nn.MaxPool1d(2)
        self.dw2 = nn.Conv1d(width, width, 5, padding=2, groups=width, bias=False)
        self.bn3 = nn.BatchNorm1d(width)
        self.relu3 = nn.ReLU()
        self.pw2 = nn.Conv1d(width, 2 * width, 1, bias=False)
        self.bn4 = nn.BatchNorm1d(2 * width)
        self.relu4 = nn.ReLU()
        self.gap = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(2 * width, n_classes)

    def forward(self, x):                  # x: [N, T, C]
        x = x.transpose(1, 2)              # [N, C, T]
        x = self.relu1(self.bn1(self.dw1(x)))
        x = self.relu2(self.bn2(self.pw1(x)))
        x = self.pool(x)
        x = self.relu3(self.bn3(self.dw2(x)))
        x = self.relu4(self.bn4(self.pw2(x)))
        x = self.gap(x).squeeze(-1)
        return self.fc(x)
