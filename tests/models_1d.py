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
