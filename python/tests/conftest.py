"""Fixtures: the librooftune under test ($ROOFTUNE_LIBRARY, set by tests/run.sh through CTest) and
a database tuned with the rooftune command ($ROOFTUNE_BIN) on the model device, so these tests
need no GPU."""
import os
import subprocess

import pytest


def rooftune_bin():
    b = os.environ.get("ROOFTUNE_BIN")
    if not b or not os.access(b, os.X_OK):
        pytest.skip("set ROOFTUNE_BIN to a built rooftune command to make the test databases")
    return b


def tune(db, *args, device="model:h200", budget=4):
    cmd = [rooftune_bin(), "tune", *args, "--device", device, "--budget", str(budget), "--db", str(db)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, "%s: %s" % (" ".join(cmd), r.stderr[-2000:])


@pytest.fixture(scope="session")
def model_db(tmp_path_factory):
    """gemm winners for 4096^3 bf16 (gemm_mma and gemm_wgmma) predicted on the model H200."""
    db = tmp_path_factory.mktemp("db") / "model.db"
    tune(db, "gemm", "--shape", "4096x4096x4096", "--dtype", "bf16")
    return db


@pytest.fixture(scope="session")
def decode_db(tmp_path_factory):
    """An attn_decode winner (split-KV decode) for 8 sequences of 8 KV heads, 4096 keys, predicted
    on the model H200; None where the template is not installed."""
    db = tmp_path_factory.mktemp("db") / "decode.db"
    r = subprocess.run([rooftune_bin(), "templates"], capture_output=True, text=True, timeout=120)
    if "attn_decode" not in r.stdout:
        pytest.skip("the attn_decode template is not installed with this rooftune")
    # space order (brute_force), so the winner is the same whatever the default strategy: the
    # lookups below need one whose constraints admit half the keys (SPLITS small enough)
    tune(db, "attn_decode", "--shape", "8x32:8x1:4096x128", "--dtype", "bf16", "--strategy", "brute_force",
         budget=3)
    return db
