# SPDX-License-Identifier: Apache-2.0
"""Build the int8 (full-integer, per-channel weights, float32 in/out) .tflite files that
benchmarks/vision.py runs with LiteRT + XNNPACK: keras.applications MobileNetV2 /
MobileNetV3-Large at 224x224, random weights (no downloads), BatchNorm statistics re-estimated
on random inputs (as the torch side does), TF converter calibrated on 8 random inputs.

TensorFlow must never share a venv with torch: run this with the python of a separate venv,
    python3 -m venv /work/tfvenv && /work/tfvenv/bin/python -m pip install tensorflow-cpu
    /work/tfvenv/bin/python benchmarks/vision_peers/make_tflite.py [OUT_DIR [ARCH...]]
ARCH: mobilenet_v2 and/or mobilenet_v3_large (default both; tools/count-insns-model.sh builds
only mobilenet_v2). OUT_DIR defaults to benchmarks/vision_peers/models (git-ignored);
benchmarks/vision.py reads {OUT_DIR}/{arch}_int8.tflite (its --tflite-dir). Adapted from
/work/shared/bench/vision.
"""

import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "models")
ARCHS = sys.argv[2:] or ["mobilenet_v2", "mobilenet_v3_large"]


def bn_recalibrate(model, bs=16):
    # momentum 0 for one training-mode pass => moving statistics = that batch's statistics
    bns = [la for la in model.layers if isinstance(la, keras.layers.BatchNormalization)]
    old = [la.momentum for la in bns]
    for la in bns:
        la.momentum = 0.0
    model(np.random.randn(bs, 224, 224, 3).astype("float32"), training=True)
    for la, m in zip(bns, old):
        la.momentum = m
    return model


def build(name):
    if name == "mobilenet_v2":
        m = keras.applications.MobileNetV2(input_shape=(224, 224, 3), weights=None,
                                           classes=1000, classifier_activation=None)
    else:
        m = keras.applications.MobileNetV3Large(input_shape=(224, 224, 3), weights=None,
                                                classes=1000, include_preprocessing=False,
                                                classifier_activation=None)
    return bn_recalibrate(m)


def rep_data():
    rng = np.random.default_rng(123)
    for _ in range(8):
        yield [rng.standard_normal((1, 224, 224, 3), dtype=np.float32)]


def main():
    os.makedirs(OUT, exist_ok=True)
    tf.random.set_seed(0)
    np.random.seed(0)
    for name in ARCHS:
        if name not in ("mobilenet_v2", "mobilenet_v3_large"):
            raise SystemExit(f"unknown ARCH {name!r}")
        conv = tf.lite.TFLiteConverter.from_keras_model(build(name))
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep_data
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        buf = conv.convert()  # float32 in/out: QUANTIZE / DEQUANTIZE at the edges
        path = os.path.join(OUT, f"{name}_int8.tflite")
        with open(path, "wb") as f:
            f.write(buf)
        print("wrote", path, len(buf), "bytes")


if __name__ == "__main__":
    main()
