"""Launching a declared family's winner from Python (Database.launch / Database.kernel over
rooftune_kernel_load and rooftune_kernel_launch), without a GPU: the README's own family
(examples/own_kernel, vscale) tuned on the model device; every argument is checked before
anything reaches the library (device pointers as ints, __cuda_array_interface__ or data_ptr(),
scalars as ctypes values), an unverified winner is not launched unless the Database allows it,
and without a CUDA driver the call raises RooftuneError ERR_NO_DRIVER naming the driver.  The
launch itself needs a GPU and is skipped here."""
import ctypes
import os
import pathlib

import pytest

import rooftune
from conftest import tune

OWN = pathlib.Path(__file__).resolve().parents[2] / "examples" / "own_kernel"


def have_driver():
    try:
        ctypes.CDLL(os.environ.get("ROOFTUNE_LIBCUDA") or "libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def vscale_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("db") / "vscale.db"
    tune(db, "vscale", "--shape", "1048576", "--dtype", "f32", "--templates", str(OWN))
    return db


class CudaArray:
    """What CuPy, Numba and PyTorch CUDA tensors show: __cuda_array_interface__."""

    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (4,), "typestr": "<f4", "version": 3}


class Tensorish:
    """A PyTorch tensor as launch() reads one, without importing torch: data_ptr() and is_cuda."""

    def __init__(self, ptr, is_cuda=True):
        self.ptr, self.is_cuda = ptr, is_cuda

    def data_ptr(self):
        return self.ptr


def test_arguments_checked_first(vscale_db):
    db = rooftune.Database(vscale_db, allow_unverified=True)
    n = ctypes.c_int32(1048576)
    a = ctypes.c_float(3.0)
    bad = [
        ([1 << 20, 2 << 20, n, 3.0], TypeError, "args[3] is a float: give its C type, ctypes.c_float(3.0)"),
        ([True, 2 << 20, n, a], TypeError, "args[0] is a bool"),
        (["x", 2 << 20, n, a], TypeError, "args[0] must be a device pointer"),
        ([-1, 2 << 20, n, a], ValueError, "args[0] = -1 is not a 64-bit device address"),
        ([1 << 20, Tensorish(4096, is_cuda=False), n, a], ValueError, "args[1] is not on the GPU"),
        ([1 << 20, 2 << 20, ctypes.c_char_p(b"x"), a], TypeError, "args[2] is a ctypes c_char_p"),
    ]
    for args, exc, text in bad:
        with pytest.raises(exc) as e:
            db.launch("vscale", "1048576", "f32", args)
        assert text in str(e.value), (args, str(e.value))
    with pytest.raises(TypeError) as e:
        db.launch("vscale", "1048576", "f32", "x, y")
    assert "args must be a list" in str(e.value)
    with pytest.raises(TypeError) as e:
        db.launch("vscale", "1048576", "f32", [1, 2, n, a], stream=1.5)
    assert "stream must be None" in str(e.value)
    # what each accepted form becomes: the 64-bit address, ctypes scalars as they are
    vals = rooftune._kernel_args("t", [CudaArray(1 << 33), Tensorish(4096), 12288, n, a])
    assert [v.value for v in vals[:3]] == [1 << 33, 4096, 12288]
    assert all(isinstance(v, ctypes.c_uint64) for v in vals[:3]) and vals[3] is n and vals[4] is a
    db.close()


def test_unverified_not_launched(vscale_db):
    """The model device's winner was never checked against the reference: not launched."""
    with rooftune.Database(vscale_db) as db:
        with pytest.raises(rooftune.RooftuneError) as e:
            db.launch("vscale", "1048576", "f32", [1 << 20, 2 << 20, ctypes.c_int32(1048576), ctypes.c_float(3.0)])
        assert e.value.name == "ERR_NOT_FOUND"
        assert "no runnable winner serves vscale 1048576 f32" in str(e.value)


def test_no_driver(vscale_db):
    if have_driver():
        pytest.skip("a CUDA driver is installed here: test_launch_on_gpu covers this machine")
    with rooftune.Database(vscale_db, allow_unverified=True) as db:
        with pytest.raises(rooftune.RooftuneError) as e:
            db.launch("vscale", "1048576", "f32", [Tensorish(1 << 20), CudaArray(2 << 20), ctypes.c_int32(1048576),
                                                   ctypes.c_float(3.0)])
        assert e.value.name == "ERR_NO_DRIVER", str(e.value)
        assert "no CUDA driver" in str(e.value) and "libcuda" in str(e.value), str(e.value)
        with pytest.raises(rooftune.RooftuneError) as e:
            db.kernel("vscale", "1048576", "f32")
        assert e.value.name == "ERR_NO_DRIVER"


def test_launch_on_gpu(vscale_db):
    """y = 3x on the GPU through Database.launch with PyTorch tensors."""
    torch = pytest.importorskip("torch", reason="the GPU launch needs PyTorch (not installed here)")
    if not torch.cuda.is_available():
        pytest.skip("no GPU here: the launch itself has not run")
    n = 1 << 20
    x = torch.full((n,), 2.0, device="cuda")
    y = torch.empty_like(x)
    with rooftune.Database(vscale_db, allow_unverified=True) as db:
        m = db.launch("vscale", str(n), "f32", [x, y, ctypes.c_int32(n), ctypes.c_float(3.0)],
                      stream=torch.cuda.current_stream())
        torch.cuda.synchronize()
    assert m.template == "vscale_vec"
    assert torch.all(y == 6.0)
