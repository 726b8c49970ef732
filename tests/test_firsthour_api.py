# SPDX-License-Identifier: Apache-2.0
"""Issue #48, the API a torch user reaches for: what torch spells one way and qrt another
either works as in torch or says what to write instead, in one message."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import qrt
from qrt.quantization import MinMaxObserver, PerChannelMinMaxObserver

DEMO = Path(qrt.__file__).parent / "data" / "demo.bin"


@pytest.fixture
def q():
    return qrt.quantize_per_tensor(np.array([[1.0, 2.0], [0.5, -1.0]], np.float32), 0.1, 10,
                                   qrt.quint8)


def test_qtensor_asarray_refuses_with_the_two_ways(q):
    """Was: an object array of 0-d QTensors, silently."""
    for f in (np.asarray, np.array, lambda t: np.array([t, t])):
        with pytest.raises(TypeError, match=r"int_repr\(\).*dequantize\(\)"):
            f(q)


@pytest.mark.parametrize("name", ["numpy", "tolist", "float"])
def test_qtensor_numpy_tolist_float_refuse_with_the_two_ways(q, name):
    with pytest.raises(TypeError, match=rf"QTensor\.{name}\(\).*int_repr\(\).*dequantize\(\)"):
        getattr(q, name)()


def test_qtensor_item_and_is_quantized(q):
    assert q.is_quantized is True
    assert q[0, 1].item() == 2.0 and type(q[0, 1].item()) is float
    assert q[1, 1].item() == float(q.dequantize()[1, 1])
    with pytest.raises(ValueError, match="4 elements"):
        q.item()


def test_storage_nbytes_attribute_and_method(q):
    s = q.storage()
    assert s.nbytes == 4 and s.nbytes() == 4 and s.nbytes + 1 == 5
    assert type(s.nbytes()) is int and isinstance(s.nbytes, int)
    assert qrt.Storage.empty(100).nbytes() == 100


def test_observer_with_torch_qscheme_or_dtype_names_qrts():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=r"use qrt\.per_tensor_symmetric"):
        MinMaxObserver(qscheme=torch.per_tensor_symmetric)
    with pytest.raises(TypeError, match=r"use qrt\.per_channel_symmetric"):
        PerChannelMinMaxObserver(qscheme=torch.per_channel_symmetric)
    with pytest.raises(TypeError, match=r"use qrt\.qint8"):
        MinMaxObserver(dtype=torch.qint8)


def test_errors_name_public_classes():
    with pytest.raises(qrt.nn.UnsupportedError) as e:
        qrt.nn.Conv1d(2, 2, 3, padding_mode="reflect")
    assert not type(e.value).__name__.startswith("_")
    assert isinstance(e.value, NotImplementedError) and isinstance(e.value, ValueError)


def test_print_profile_is_the_table(capsys):
    m = qrt.load(DEMO)
    p = m.profile(np.zeros((1, 1, 1000), np.float32), iters=2, warmup=1)
    print(p)
    out = capsys.readouterr().out
    assert out == p.table() + "\n" and "median us" in out and "Profile(" not in out


def test_empty_batch_says_so():
    m = qrt.load(DEMO)
    with pytest.raises(ValueError, match="the batch is empty"):
        m(np.zeros((0, 1, 1000), np.float32))


def test_float64_refused_with_the_conversion_by_api_and_cli(tmp_path):
    """One behaviour for ``Model()`` and ``qrt run``: float32 only, with how to convert."""
    m = qrt.load(DEMO)
    with pytest.raises(ValueError, match=r"float64 \(convert it with x\.astype\(np\.float32\)"):
        m(np.zeros((1, 1, 1000)))
    np.save(tmp_path / "x.npy", np.zeros((1, 1, 1000)))
    script = Path(sys.executable).parent / "qrt"   # the installed command (python -m qrt
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "qrt"]   # under qemu)
    r = subprocess.run(cmd + ["run", str(DEMO), "-i", "x.npy"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "float64" in r.stderr and "astype(np.float32)" in r.stderr


def test_public_names_resolve_lazily_and_type_check():
    """``import qrt`` imports no numpy; every name in ``__all__`` resolves; ``qrt.load`` and
    ``qrt.functional.conv1d`` carry annotations (not ``Any`` for a type checker)."""
    code = ("import sys, qrt; assert 'numpy' not in sys.modules, 'numpy'; "
            "[getattr(qrt, n) for n in qrt.__all__]; assert 'numpy' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    import inspect
    assert inspect.signature(qrt.load).return_annotation not in (inspect.Signature.empty,)
    assert inspect.signature(qrt.functional.conv1d).return_annotation \
        is not inspect.Signature.empty


def test_blobs_record_this_exporter_version():
    """Was ``qrt-export 0.1.0`` in every blob written under qrt 0.2.0."""
    import qrt_export
    assert qrt_export.EXPORTER_VERSION == qrt.__version__ == qrt_export.__version__
