# SPDX-License-Identifier: Apache-2.0
"""Multi-threaded conv1d / linear: every thread count gives bit-identical results."""

import os
import subprocess
import sys

import numpy as np
import pytest

import qrt
from qrt import _conv1d

from test_conv1d import expected, layer, random_cfg, cfg_str


@pytest.fixture
def cut_everything():
    """Cut even tiny layers, restore the thread count and the threshold afterwards."""
    old_t = qrt.get_num_threads()
    old_w = _conv1d._set_mt_min_work(0.0)
    yield
    _conv1d._set_mt_min_work(old_w)
    qrt.set_num_threads(old_t)


def odd_cfg(rng):
    """Random configs with odd sizes around tile edges (8 channels, 16/48 positions)."""
    c = random_cfg(rng, big=True)
    return c


def test_set_get_num_threads():
    old = qrt.get_num_threads()
    try:
        qrt.set_num_threads(3)
        assert qrt.get_num_threads() == 3
        with pytest.raises(ValueError, match="n=0"):
            qrt.set_num_threads(0)
        with pytest.raises(TypeError, match="int"):
            qrt.set_num_threads(2.0)
        with pytest.raises(ValueError):
            qrt.set_num_threads(_conv1d.MAX_THREADS + 1)
    finally:
        qrt.set_num_threads(old)


def test_default_and_env():
    code = "import qrt; print(qrt.get_num_threads())"
    env = dict(os.environ)
    env.pop("QRT_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert int(out) == len(os.sched_getaffinity(0))
    env["QRT_NUM_THREADS"] = "5"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert int(out) == 5
    env["QRT_NUM_THREADS"] = "lots"
    r = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code], env=env,
                       capture_output=True, text=True)
    assert r.returncode != 0 and "QRT_NUM_THREADS" in r.stderr


def test_split_axes():
    # batch, positions, channels, groups; tiny layers stay on one thread
    assert _conv1d.split(8, 64, 64, 1000, 1000, 3, 1, 1, 1, 1, threads=2)[:2] == (2, 0)
    chunks, axis, per = _conv1d.split(1, 64, 64, 1000, 1000, 3, 1, 1, 1, 1, threads=2)[:3]
    assert axis == 1 and chunks >= 2 and per % 16 == 0
    chunks, axis, per = _conv1d.split(1, 4096, 1024, 1, 1, 1, 1, 1, 0, 1, threads=2)[:3]
    assert axis == 2 and chunks >= 2 and per % 8 == 0
    assert _conv1d.split(1, 8, 8, 10, 10, 3, 1, 1, 1, 1, threads=2)[0] == 1


@pytest.mark.parametrize("seed", range(3))
def test_conv1d_threads_bit_identical(cut_everything, seed):
    rng = np.random.default_rng(7000 + seed)
    for _ in range(25):
        c = odd_cfg(rng)
        want = expected(c)
        x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
        for variant in _conv1d.variants():
            m = layer(c, variant)
            for t in (1, 2, 3, 7):
                qrt.set_num_threads(t)
                got = m(x).int_repr()
                np.testing.assert_array_equal(got, want, err_msg=f"threads {t} variant {variant}"
                                              f" {cfg_str(c)}")


EDGE_SHAPES = [  # (n, c_in, c_out, length, k, stride, pad, dilation, groups)
    (1, 13, 17, 143, 3, 1, 1, 1, 1),     # positions: chunks of 48 with a ragged tail
    (1, 5, 9, 97, 5, 2, 2, 1, 1),        # strided
    (1, 7, 7, 191, 3, 1, 2, 2, 7),       # depthwise, dilated
    (3, 9, 23, 49, 3, 1, 1, 1, 1),       # batch 3 over 2 / 7 threads
    (1, 33, 41, 20, 1, 1, 0, 1, 1),      # short: channel split
    (1, 12, 24, 30, 3, 1, 1, 1, 4),      # short: group split
    (1, 3, 5, 100, 9, 1, 40, 1, 1),      # wide padding: chunks inside the left padding
    (2, 1, 16, 301, 9, 1, 4, 1, 1),      # c_in = 1 (im2col packing)
]


@pytest.mark.parametrize("shape", EDGE_SHAPES)
def test_conv1d_threads_edges(cut_everything, shape):
    from test_conv1d import make
    n, ci, co, length, k, s, pad, d, g = shape
    for asym in (False, True):
        c = make(n, ci, co, length, k, s, pad, d, g, seed=sum(shape), asym=asym)
        want = expected(c)
        x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
        for variant in _conv1d.variants():
            m = layer(c, variant)
            for t in (1, 2, 3, 7):
                qrt.set_num_threads(t)
                np.testing.assert_array_equal(m(x).int_repr(), want,
                                              err_msg=f"threads {t} variant {variant} {shape}")


def test_linear_threads_bit_identical(cut_everything):
    rng = np.random.default_rng(11)
    for rows, fin, fout in [(1, 37, 71), (5, 64, 130), (97, 19, 33)]:
        w = rng.integers(-128, 128, (fout, fin), dtype=np.int8)
        qw = qrt.from_int_repr_per_channel(w, rng.uniform(0.001, 0.02, fout),
                                           np.zeros(fout, np.int64), 0)
        m = qrt.nn.Linear(fin, fout)
        m.scale, m.zero_point = 0.3, 120
        m.set_weight_bias(qw, rng.standard_normal(fout).astype(np.float32))
        x = qrt.from_int_repr(rng.integers(0, 256, (rows, fin), dtype=np.uint8), 0.05, 128)
        qrt.set_num_threads(1)
        want = m(x).int_repr().copy()
        for t in (2, 3, 7):
            qrt.set_num_threads(t)
            np.testing.assert_array_equal(m(x).int_repr(), want, err_msg=f"{rows} {t}")


def _mid_layer(seed=3):
    from test_conv1d import make
    c = make(2, 24, 40, 700, 3, 1, 1, seed=seed)
    return c, layer(c), qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])


def test_concurrent_python_threads(cut_everything):
    """Two Python threads on one layer (one finds the pool busy and runs its chunks inline)."""
    import threading
    c, m, x = _mid_layer()
    want = expected(c)
    qrt.set_num_threads(2)
    errors = []

    def work():
        try:
            for _ in range(20):
                np.testing.assert_array_equal(m(x).int_repr(), want)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[0]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.skipif(bool(os.environ.get("QRT_UNDER_QEMU")),
                    reason="qemu-user cannot run a forked child of a threaded process")
def test_pool_after_fork(cut_everything):
    """A forked child starts its own workers and computes the same result."""
    c, m, x = _mid_layer(4)
    want = expected(c)
    qrt.set_num_threads(2)
    np.testing.assert_array_equal(m(x).int_repr(), want)  # parent's workers exist now
    pid = os.fork()
    if pid == 0:  # child: exit code 0 only if the threaded result is right
        ok = False
        try:
            ok = bool(np.array_equal(m(x).int_repr(), want))
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
