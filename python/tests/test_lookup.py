"""rooftune's Python package without a GPU: lookups by the serving rules on a database tuned on
the model device (exact; the next rule past a kernel whose constraint fails; cuBLASLt past the
distance cap; the cap; exact only), what a Match carries, errors as RooftuneError with the
library's names and messages, the attention shape, the library's version and struct layouts, and
gemm's and attention's argument checks."""
import ctypes
import os
import sqlite3

import pytest

import rooftune
from rooftune import _lib


def test_library_and_layouts():
    assert rooftune.version() == "0.3.0"
    assert os.path.exists(rooftune.library_path()) or rooftune.library_path().startswith("librooftune")
    lib = rooftune._L()
    for name, cls in _lib.STRUCTS.items():  # the package's structs are the library's
        assert lib.rooftune_struct_size(name.encode()) == ctypes.sizeof(cls), name


def test_exact(model_db):
    with rooftune.Database(model_db) as db:
        m = db.lookup("gemm", "4096x4096x4096", "bf16")
        assert m.found and m.rule == "exact" and m.match == "exact"
        assert m.template in ("gemm_mma", "gemm_wgmma")
        assert m.timing == "predicted" and m.device == "model:h200" and m.mismatch == []
        assert m.cubin_bytes > 0 and m.config["BLOCK_M"] > 0 and m.geometry is not None
        assert m.passed_over == [] and m.distance == 0
        # predicted: never checked against the reference, so not launched unless allowed
        assert not m.verified and not m.runnable and "not verified" in repr(m)
        refused = db.lookup("gemm", "4096x4096x4096", "bf16", runnable=True)  # what rooftune_gemm asks
        assert not refused.found and refused.rule == "library" and refused.library == "cublaslt"
        assert any(line.startswith(m.template + " 4096x4096x4096") and "not verified: predicted on model:h200" in line
                   for line in refused.passed_over), refused.passed_over
        assert "unverified winner" in refused.reason and "ROOFTUNE_ALLOW_UNVERIFIED" in refused.reason
        allowed = db.lookup("gemm", "4096x4096x4096", "bf16", runnable=True, allow_unverified=True)
        assert allowed.found and allowed.template == m.template and allowed.runnable and not allowed.verified


def test_allow_unverified_calls(model_db):
    """Database(allow_unverified=True) asks the one-call functions to launch unverified winners too
    (rooftune_set_flags); a CallInfo says whether what ran was verified."""
    db = rooftune.Database(model_db, allow_unverified=True)
    assert db.allow_unverified
    lib = rooftune._L()
    with pytest.raises(rooftune.RooftuneError) as e:
        rooftune._check(lib.rooftune_set_flags(db._h, _lib.RUNNABLE))
    assert e.value.name == "ERR_INVALID" and "only ROOFTUNE_ALLOW_UNVERIFIED" in str(e.value)
    info = rooftune.CallInfo(_lib.Info())
    assert info.verified is False


def test_next_past_a_failing_constraint(model_db):
    """4096x4096x4095: gemm_wgmma's K constraint fails; gemm_mma, tuned for 4096^3, admits it."""
    db = rooftune.Database(model_db)
    m = db.lookup("gemm", "4096x4096x4095", "bf16")
    assert m.found and m.template == "gemm_mma" and m.shape == "4096x4096x4096"
    exact = db.lookup("gemm", "4096x4096x4096", "bf16")
    if exact.template == "gemm_wgmma":  # the faster one fails the constraint: the next rule
        assert m.rule == "next" and m.passed_count == 1
        assert "gemm_wgmma 4096x4096x4096" in m.passed_over[0] and "fails for 4096x4096x4095" in m.passed_over[0]
    else:
        assert m.rule == "nearest"
    assert m.geometry is not None and m.geometry[0][0] > 0


def test_library_past_the_cap(model_db):
    db = rooftune.Database(model_db)
    m = db.lookup("gemm", "64x64x64", "bf16")
    assert not m.found and m.rule == "library" and m.library == "cublaslt"
    assert "over the cap 1.25" in m.passed_over[0]
    assert "no tuned winner admits gemm 64x64x64 bf16 within distance 1.25" in m.reason
    far = db.lookup("gemm", "64x64x64", "bf16", nearest_max=100)
    assert far.found and far.rule in ("nearest", "next") and far.nearest_max == 100
    assert not db.lookup("gemm", "2048x4096x4096", "bf16", exact=True).found


def test_cap_from_the_environment(model_db, monkeypatch):
    db = rooftune.Database(model_db)
    monkeypatch.setenv("ROOFTUNE_NEAREST_MAX", "0.5")
    assert db.lookup("gemm", "2048x4096x4096", "bf16").rule == "library"
    monkeypatch.setenv("ROOFTUNE_NEAREST_MAX", "far")
    with pytest.raises(rooftune.RooftuneError) as e:
        db.lookup("gemm", "2048x4096x4096", "bf16")
    assert e.value.name == "ERR_INVALID" and "ROOFTUNE_NEAREST_MAX='far'" in str(e.value)


def test_provenance(model_db):
    db = rooftune.Database(model_db)
    m = db.lookup("gemm", "4096x4096x4096", "bf16", device="A100")  # not the model device
    assert not m.found and "refused" in m.reason
    m = db.lookup("gemm", "4096x4096x4096", "bf16", device="A100", allow_mismatch=True)
    assert m.found and m.mismatch == ["device"]
    assert not db.lookup("gemm", "4096x4096x4096", "bf16", toolkit="cuda 1.0, nvrtc 1.0, cublaslt 1").found


def test_damaged_cubin_not_served(model_db, tmp_path):
    """64 bytes flipped in the exact winner's cubin: lookup(runnable=True) passes it over as damaged,
    naming the winner, and serves the next one; a plain lookup no longer calls it runnable."""
    db_path = tmp_path / "damaged.db"
    db_path.write_bytes(model_db.read_bytes())
    with rooftune.Database(db_path) as db:
        first = db.lookup("gemm", "4096x4096x4096", "bf16", runnable=True, allow_unverified=True)
    assert first.found and first.runnable
    c = sqlite3.connect(str(db_path))
    wid, blob = c.execute("SELECT w.id, c.cubin FROM winners w JOIN winner_cubins c ON c.winner_id=w.id "
                          "JOIN templates t ON t.id=w.template_id WHERE t.name=?", (first.template,)).fetchone()
    b = bytearray(blob)
    for i in range(len(b) // 2, len(b) // 2 + 64):
        b[i] ^= 0xFF
    c.execute("UPDATE winner_cubins SET cubin=? WHERE winner_id=?", (bytes(b), wid))
    c.commit()
    c.close()
    with rooftune.Database(db_path) as db:
        m = db.lookup("gemm", "4096x4096x4096", "bf16", runnable=True, allow_unverified=True)
        assert m.template != first.template, m
        assert m.found or m.rule == "library"
        assert any(first.template in line and "damaged" in line and "winner %d" % wid in line
                   for line in m.passed_over), m.passed_over
        plain = db.lookup("gemm", "4096x4096x4096", "bf16", allow_unverified=True)
        assert plain.template == first.template and plain.match == "exact" and not plain.runnable


def test_errors(model_db, tmp_path):
    db = rooftune.Database(model_db)
    with pytest.raises(rooftune.RooftuneError) as e:
        db.lookup("gemm", "40x96x", "bf16")
    assert e.value.name == "ERR_INVALID" and "40x96x" in e.value.message
    with pytest.raises(rooftune.RooftuneError) as e:
        rooftune.Database(tmp_path / "missing.db")
    assert e.value.name == "ERR_IO" and "missing.db" in e.value.message
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t(x)").connection.commit()
    with pytest.raises(rooftune.RooftuneError) as e:
        rooftune.Database(other)
    assert e.value.name == "ERR_DB_FOREIGN"
    db.close()
    with pytest.raises(ValueError):
        db.lookup("gemm", "1x1x1", "f32")


def test_default_path(model_db, monkeypatch):
    monkeypatch.setenv("ROOFTUNE_DB", str(model_db))
    assert rooftune.default_db_path() == str(model_db)
    assert rooftune.Database().lookup("gemm", "4096x4096x4096", "bf16").found


def test_attention(model_db):
    assert rooftune.attention_shape("bf16", 64, 32, 1, 128, heads_kv=8, seq_kv=8192, page_size=16) == \
        "64x32:8x1:8192x128:paged16"
    with pytest.raises(rooftune.RooftuneError) as e:
        rooftune.attention_shape("bf16", 1, 32, 1, 128, heads_kv=7)
    assert "HQ must be a multiple of HKV" in e.value.message
    m = rooftune.Database(model_db).lookup("attention", "64x32:8x1:8192x128:paged16", "bf16")
    assert not m.found, m
    if m.rule == "library":  # cuDNN loads here: its own choice serves the call
        assert m.library == "cudnn" and "cuDNN's own choice serves it" in m.reason, m
    else:
        assert m.rule == "none" and "its vendor library (cuDNN) cannot be loaded here" in m.reason, m


def test_call_checks():
    torch = pytest.importorskip("torch", reason="gemm and attention take PyTorch tensors")
    cpu = torch.zeros(4, 4)
    with pytest.raises(ValueError, match="CUDA tensor"):
        rooftune.gemm(cpu, cpu)
    with pytest.raises(ValueError, match="contiguous 4-D CUDA tensor"):
        rooftune.attention(cpu, cpu, cpu)


def test_attention_decode_lookup(decode_db):
    """Decode problems are served by (B*HKV, SKV): 64 sequences of one KV head sit where the tuned
    8 x 8 heads do; half the keys for twice the sequences is sqrt(2) ln 2 away."""
    db = rooftune.Database(decode_db)
    m = db.lookup("attention", "8x32:8x1:4096x128", "bf16")
    assert m.rule == "exact" and m.template == "attn_decode" and m.config["SPLITS"] >= 1
    m = db.lookup("attention", "64x4:1x1:4096x128", "bf16")
    assert m.found and m.distance == 0 and m.match == "nearest"
    m = db.lookup("attention", "16x32:8x1:2048x128", "bf16")
    assert abs(m.distance - 2 ** 0.5 * 0.6931471805599453) < 1e-9
    assert m.found or "fails for" in m.passed_over[0]  # a split count may not fit half the keys
    m = db.lookup("attention", "8x32:8x1:4096x128:paged16", "bf16")  # not paged when tuned
    assert not m.found and "PAGE == page_size" in m.passed_over[0]
