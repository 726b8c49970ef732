# SPDX-License-Identifier: Apache-2.0
"""The model zoo of issue #45, shared by tests/test_zoo.py and benchmarks/zoo.py: published
model classes as their libraries ship them (HuggingFace transformers, timm, torchaudio,
torchvision, PyTorch's word-language-model tutorial, an ECG ResNet), random weights (BatchNorm
statistics re-estimated), small configs, each in the flavours users quantize it in:

  dynamic  torch.ao.quantization.quantize_dynamic (nn.Linear, and the RNNs where there are)
  fx       the float model and ``calibration_data``: qrt_export quantizes it with torch.ao FX
  pt2e     torchao's pt2e flow (tests/_pt2e.py, the XNNPACK-style quantizer), the converted
           program exported

``CASES[name].build()`` returns (model or program, example inputs tuple, export kwargs).
Nothing here is imported by qrt.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn as nn

import _pt2e
from _torch_models import bn_recalibrate, torchaudio_models, torchvision

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)


@dataclass
class Case:
    name: str
    model: str        # the class / factory
    library: str
    flavour: str
    build: Callable[[], tuple]


def _g(seed):
    return torch.Generator().manual_seed(seed)


def _dynamic(m, types=(nn.Linear,)):
    torch.backends.quantized.engine = "qnnpack"
    return torch.ao.quantization.quantize_dynamic(m.eval(), set(types), dtype=torch.qint8)


def _static(m, shape, n=3):
    """(float model, example, kwargs with calibration batches): qrt quantizes with torch.ao FX."""
    ex = torch.randn(*shape, generator=_g(2))
    calib = [torch.randn(*shape, generator=_g(10 + k)) for k in range(n)]
    return m.eval(), (ex,), {"calibration_data": calib}


def _pt2e_flow(m, shape, n=3):
    torch.backends.quantized.engine = "qnnpack"
    ex = (torch.randn(*shape, generator=_g(2)),)
    calib = [torch.randn(*shape, generator=_g(10 + k)) for k in range(n)]
    c = _pt2e.pt2e_quantize(m.eval(), ex, _pt2e.QUANTIZERS["xnnpack"](), calib)
    return c, ex, {}


# ---- HuggingFace transformers ------------------------------------------------------------
def _text_inputs(vocab, seq=16, batch=2, token_types=True):
    ids = torch.randint(1, vocab, (batch, seq), generator=_g(3))
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[1, seq - 5:] = 0          # one row padded: trailing zeros
    ids[1, seq - 5:] = 0
    if not token_types:
        return ids, mask
    tt = torch.zeros(batch, seq, dtype=torch.long)
    tt[:, seq // 2:] = 1
    return ids, mask, tt


def _bert():
    torchvision()
    from transformers import BertConfig, BertForSequenceClassification
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=64, num_labels=3)
    m = BertForSequenceClassification(cfg).eval()
    return _dynamic(m), _text_inputs(1000), {}


def _distilbert():
    torchvision()
    from transformers import DistilBertConfig, DistilBertForSequenceClassification
    torch.manual_seed(0)
    cfg = DistilBertConfig(vocab_size=1000, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
                           max_position_embeddings=64, num_labels=3)
    m = DistilBertForSequenceClassification(cfg).eval()
    return _dynamic(m), _text_inputs(1000, token_types=False), {}


def _hf_wav2vec2():
    torchvision()
    from transformers import Wav2Vec2Config, Wav2Vec2ForSequenceClassification
    torch.manual_seed(0)
    cfg = Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=128, conv_dim=(32, 32, 32), conv_stride=(5, 2, 2),
                         conv_kernel=(10, 3, 2), num_conv_pos_embeddings=16,
                         num_conv_pos_embedding_groups=4, classifier_proj_size=32,
                         num_labels=3)
    m = Wav2Vec2ForSequenceClassification(cfg).eval()
    return _dynamic(m), (torch.randn(1, 1600, generator=_g(2)),), {}


# ---- timm ----------------------------------------------------------------------------------
def _timm(name, size=64, **kw):
    torchvision()
    import timm
    torch.manual_seed(0)
    m = timm.create_model(name, pretrained=False, **kw)
    return bn_recalibrate(m, (4, 3, size, size)).eval()


def _timm_case(name, flavour, size=64, **kw):
    def build():
        m = _timm(name, size, **kw)
        shape = (1, 3, size, size)
        return _static(m, shape) if flavour == "fx" else _pt2e_flow(m, shape)
    return build


# ---- torchaudio ----------------------------------------------------------------------------
def _wav2vec2():
    w = torchaudio_models("wav2vec2")
    torch.manual_seed(0)
    m = w.wav2vec2_model(
        extractor_mode="group_norm", extractor_conv_layer_config=[(32, 10, 5), (32, 3, 2),
                                                                  (32, 2, 2)],
        extractor_conv_bias=False, encoder_embed_dim=64, encoder_projection_dropout=0.0,
        encoder_pos_conv_kernel=16, encoder_pos_conv_groups=4, encoder_num_layers=2,
        encoder_num_heads=4, encoder_attention_dropout=0.0, encoder_ff_interm_features=128,
        encoder_ff_interm_dropout=0.0, encoder_dropout=0.0, encoder_layer_norm_first=False,
        encoder_layer_drop=0.0, aux_num_out=29).eval()
    return _dynamic(m), (torch.randn(1, 1600, generator=_g(2)),), {}


def _conv_tasnet(flavour):
    def build():
        ct = torchaudio_models("conv_tasnet")
        torch.manual_seed(0)
        m = ct.ConvTasNet(num_sources=2, enc_kernel_size=16, enc_num_feats=64,
                          msk_kernel_size=3, msk_num_feats=32, msk_num_hidden_feats=64,
                          msk_num_layers=2, msk_num_stacks=1)
        shape = (1, 1, 800)
        return _static(m, shape) if flavour == "fx" else _pt2e_flow(m, shape)
    return build


def _deepspeech():
    ds = torchaudio_models("deepspeech")
    torch.manual_seed(0)
    m = ds.DeepSpeech(n_feature=40, n_hidden=64, n_class=29)
    return _dynamic(m, (nn.Linear, nn.LSTM)), (torch.randn(1, 1, 20, 40, generator=_g(2)),), \
        {"keep_float": True}


def _wav2letter(flavour):
    def build():
        wl = torchaudio_models("wav2letter")
        torch.manual_seed(0)
        m = wl.Wav2Letter(num_classes=29, input_type="mfcc", num_features=13).eval()
        if flavour == "fx":
            return _static(m, (1, 13, 24))
        return _dynamic(m), (torch.randn(1, 13, 24, generator=_g(2)),), {"keep_float": True}
    return build


def _conformer():
    cf = torchaudio_models("conformer")
    torch.manual_seed(0)
    m = cf.Conformer(input_dim=32, num_heads=4, ffn_dim=64, num_layers=2,
                     depthwise_conv_kernel_size=7).eval()
    x = torch.randn(2, 20, 32, generator=_g(2))
    lengths = torch.tensor([20, 15])
    return _dynamic(m), (x, lengths), {}


# ---- torchvision segmentation ---------------------------------------------------------------
def _tv_seg(name, flavour, size=64):
    def build():
        tv = torchvision()
        torch.manual_seed(0)
        m = getattr(tv.models.segmentation, name)(weights=None, weights_backbone=None,
                                                  num_classes=4)
        m = bn_recalibrate(m, (4, 3, size, size))
        shape = (1, 3, size, size)
        return _static(m, shape) if flavour == "fx" else _pt2e_flow(m, shape)
    return build


# ---- PyTorch's word-language-model tutorial --------------------------------------------------
class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder (PyTorch examples,
    word_language_model/model.py, as the dynamic quantization tutorial uses it: LSTM)."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ["LSTM", "GRU"]:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        self.encoder.weight.data.uniform_(-initrange, initrange)
        self.decoder.bias.data.zero_()
        self.decoder.weight.data.uniform_(-initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        return decoded, hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def _word_lm():
    torch.manual_seed(0)
    m = RNNModel("LSTM", 1000, 64, 64, 2, dropout=0.5).eval()
    x = torch.randint(0, 1000, (12, 2), generator=_g(3))
    h = (torch.randn(2, 2, 64, generator=_g(4)) * 0.5, torch.randn(2, 2, 64, generator=_g(5)))
    return _dynamic(m, (nn.LSTM, nn.Linear)), (x, h), {}


# ---- ECG ResNet with a zero-padded shortcut ---------------------------------------------------
class ECGResBlock(nn.Module):
    """Residual block of the ECG ResNets (Ribeiro et al. 2020 style): where the block doubles
    its channels, the shortcut is max-pooled in time and zero-padded in channels with
    ``torch.cat([shortcut, torch.zeros_like(shortcut)], 1)``."""

    def __init__(self, c_in, c_out, k=9, stride=1):
        super().__init__()
        self.conv1 = nn.Conv1d(c_in, c_out, k, padding=k // 2, bias=False)
        self.bn1 = nn.BatchNorm1d(c_out)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv1d(c_out, c_out, k, stride=stride, padding=k // 2, bias=False)
        self.bn2 = nn.BatchNorm1d(c_out)
        self.relu2 = nn.ReLU()
        self.pool = nn.MaxPool1d(stride, stride) if stride > 1 else nn.Identity()
        self.pad = c_out == 2 * c_in

    def forward(self, x):
        shortcut = self.pool(x)
        if self.pad:
            shortcut = torch.cat([shortcut, torch.zeros_like(shortcut)], 1)
        y = self.relu1(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu2(y + shortcut)


class ECGZeroPadResNet(nn.Module):
    def __init__(self, n_leads=1, n_classes=6, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(n_leads, width, 15, padding=7, bias=False),
                                  nn.BatchNorm1d(width), nn.ReLU())
        self.blocks = nn.Sequential(ECGResBlock(width, width, stride=1),
                                    ECGResBlock(width, 2 * width, stride=2),
                                    ECGResBlock(2 * width, 4 * width, stride=2))
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(4 * width, n_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


def _bn1d_recalibrate(m, shape, batches=3, seed=7):
    for b in m.modules():
        if isinstance(b, nn.BatchNorm1d):
            b.reset_running_stats()
            b.momentum = None
    m.train()
    with torch.no_grad():
        for _ in range(batches):
            m(torch.randn(*shape, generator=_g(seed)))
    return m.eval()


def _ecg(flavour):
    def build():
        torch.manual_seed(0)
        shape = (1, 1, 256)
        m = _bn1d_recalibrate(ECGZeroPadResNet(), (4, 1, 256))
        if flavour == "fx":
            return _static(m, shape)
        return _dynamic(m), (torch.randn(*shape, generator=_g(2)),), {}
    return build


CASES = {c.name: c for c in [
    Case("bert_dynamic", "BertForSequenceClassification", "transformers", "dynamic", _bert),
    Case("distilbert_dynamic", "DistilBertForSequenceClassification", "transformers",
         "dynamic", _distilbert),
    Case("hf_wav2vec2_dynamic", "Wav2Vec2ForSequenceClassification", "transformers",
         "dynamic", _hf_wav2vec2),
    Case("mobilenetv3_fx", "mobilenetv3_large_100", "timm", "fx",
         _timm_case("mobilenetv3_large_100", "fx")),
    Case("mobilenetv3_pt2e", "mobilenetv3_large_100", "timm", "pt2e",
         _timm_case("mobilenetv3_large_100", "pt2e")),
    Case("efficientnet_lite0_fx", "efficientnet_lite0", "timm", "fx",
         _timm_case("efficientnet_lite0", "fx")),
    Case("efficientnet_lite0_pt2e", "efficientnet_lite0", "timm", "pt2e",
         _timm_case("efficientnet_lite0", "pt2e")),
    Case("vit_tiny_fx", "vit_tiny_patch16_224 (img 64)", "timm", "fx",
         _timm_case("vit_tiny_patch16_224", "fx", img_size=64)),
    Case("vit_tiny_pt2e", "vit_tiny_patch16_224 (img 64)", "timm", "pt2e",
         _timm_case("vit_tiny_patch16_224", "pt2e", img_size=64)),
    Case("wav2vec2_dynamic", "wav2vec2_model", "torchaudio", "dynamic", _wav2vec2),
    Case("conv_tasnet_fx", "ConvTasNet", "torchaudio", "fx", _conv_tasnet("fx")),
    Case("conv_tasnet_pt2e", "ConvTasNet", "torchaudio", "pt2e", _conv_tasnet("pt2e")),
    Case("deepspeech_dynamic", "DeepSpeech", "torchaudio", "dynamic", _deepspeech),
    Case("wav2letter_dynamic", "Wav2Letter", "torchaudio", "dynamic", _wav2letter("dynamic")),
    Case("wav2letter_fx", "Wav2Letter", "torchaudio", "fx", _wav2letter("fx")),
    Case("conformer_dynamic", "Conformer", "torchaudio", "dynamic", _conformer),
    Case("lraspp_fx", "lraspp_mobilenet_v3_large", "torchvision", "fx",
         _tv_seg("lraspp_mobilenet_v3_large", "fx")),
    Case("lraspp_pt2e", "lraspp_mobilenet_v3_large", "torchvision", "pt2e",
         _tv_seg("lraspp_mobilenet_v3_large", "pt2e")),
    Case("deeplabv3_fx", "deeplabv3_mobilenet_v3_large", "torchvision", "fx",
         _tv_seg("deeplabv3_mobilenet_v3_large", "fx")),
    Case("deeplabv3_pt2e", "deeplabv3_mobilenet_v3_large", "torchvision", "pt2e",
         _tv_seg("deeplabv3_mobilenet_v3_large", "pt2e")),
    Case("word_lm_dynamic", "RNNModel (LSTM)", "pytorch/examples", "dynamic", _word_lm),
    Case("ecg_zeropad_fx", "ECG ResNet (zero-pad shortcut)", "(ECG repos)", "fx", _ecg("fx")),
    Case("ecg_zeropad_dynamic", "ECG ResNet (zero-pad shortcut)", "(ECG repos)", "dynamic",
         _ecg("dynamic")),
]}


def first_error(e: BaseException) -> str:
    msg = str(e).strip()
    return f"{type(e).__name__}: {msg.splitlines()[0] if msg else ''}"


def summary(rep):
    """(ops ok, ops total, agreement string, quantized exact?, float rel, capture path)."""
    ok = sum(bool(r["ok"]) for r in rep.ops)
    a = rep.agreement.get("qnnpack", {})
    parts, exact, rel = [], None, None
    if "error" in a:
        parts.append("not compared: " + a["error"])
    else:
        if a.get("total"):
            exact = a["exact"] == a["total"]
            parts.append(f"{a['exact']}/{a['total']} codes")
        f = a.get("float")
        if f:
            rel = f["max_abs"] / f["max_ref"] if f["max_ref"] else f["max_abs"]
            parts.append(f"float {f['max_abs']:.2g}/{f['max_ref']:.2g}")
    kind = rep.model_kind or ""
    cap = "torch.export" if ("captured with torch.export" in kind or
                             "graph torch.export captured" in kind) else "fx"
    if (rep.model_kind or "").startswith("pt2e"):
        cap = "pt2e program" + (" (torch.export)" if "torch.export" in rep.model_kind[4:]
                                else "")
    return ok, len(rep.ops), "; ".join(parts) or "-", exact, rel, cap
