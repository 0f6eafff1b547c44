"""rooftune's Python package on a GPU: rooftune.gemm against torch.matmul (cuBLASLt without a
database, then kernels tuned on this GPU by the rooftune command, for their own shape, a nearby
one and a linear layer's transposed weight), and rooftune.attention against PyTorch's
scaled_dot_product_attention on an attn_mma winner tuned here, through cuDNN for a shape nothing
tuned serves, and through PyTorch itself for a mask cuDNN refuses.  Every test skips with its reason
without PyTorch, a GPU or the rooftune command."""
import os

import pytest

import rooftune
from conftest import tune
from rooftune import _fallback

torch = pytest.importorskip("torch", reason="the GPU tests compare with PyTorch, which is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU visible to PyTorch", allow_module_level=True)


@pytest.fixture(scope="module")
def gpu_db(tmp_path_factory):
    db = os.environ.get("ROOFTUNE_GPU_DB")  # tests/gpu/steps/85-runtime.sh hands its own
    if db and os.path.exists(db):
        return db
    db = tmp_path_factory.mktemp("gpu") / "gpu.db"
    tune(db, "gemm_mma", "--shape", "512x512x512", "--dtype", "bf16", device="cuda", budget=3)
    tune(db, "attn_mma", "--shape", "2x8:2x256x64:causal", "--dtype", "bf16", device="cuda", budget=3)
    return str(db)


def check(c, ref, what):
    err = ((c - ref).norm() / ref.norm()).item()
    assert err < 2e-3, "%s: relative error %g" % (what, err)


def test_gemm_without_a_database():
    a = torch.randn(300, 200, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(200, 100, device="cuda", dtype=torch.bfloat16)
    c, info = rooftune.gemm(a, b, return_info=True)
    assert info.path == "library" and info.template == "cublaslt" and "no tuning database" in info.reason
    check(c, a.float() @ b.float(), "cuBLASLt")


def test_gemm_tuned(gpu_db):
    db = rooftune.Database(gpu_db)
    a = torch.randn(512, 512, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(512, 512, device="cuda", dtype=torch.bfloat16)
    c, info = rooftune.gemm(a, b, db=db, return_info=True)
    assert info.path == "exact" and info.template.startswith("gemm_"), info
    check(c, a.float() @ b.float(), "tuned")
    a2 = a[:480].contiguous()  # a nearby shape, served by the same winner
    c2, info = rooftune.gemm(a2, b, db=db, return_info=True)
    assert info.path in ("nearest", "next", "library"), info
    check(c2, a2.float() @ b.float(), "nearby shape (%s)" % info.path)
    w = torch.randn(384, 512, device="cuda", dtype=torch.bfloat16)  # a linear layer: y = a w^T
    check(rooftune.gemm(a, w.t(), db=db), a.float() @ w.float().t(), "nt layout")
    out = torch.empty(2, 512, 512, device="cuda")
    ab = torch.stack([a, a]), torch.stack([b, b])
    rooftune.gemm(ab[0], ab[1], out=out, db=db)
    check(out[1], a.float() @ b.float(), "batched")
    s = torch.cuda.Stream()  # the current stream is the one used
    with torch.cuda.stream(s):
        c3 = rooftune.gemm(a, b, db=db)
    s.synchronize()
    check(c3, a.float() @ b.float(), "side stream")


def test_attention_tuned(gpu_db):
    db = rooftune.Database(gpu_db)
    q = torch.randn(2, 256, 8, 64, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(2, 256, 2, 64, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(2, 256, 2, 64, device="cuda", dtype=torch.bfloat16)
    o, info = rooftune.attention(q, k, v, db=db, causal=True, return_info=True)
    assert info.path == "exact" and info.template == "attn_mma", info
    kr = k.repeat_interleave(4, dim=2)
    vr = v.repeat_interleave(4, dim=2)
    ref = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2).float(), kr.transpose(1, 2).float(),
                                                           vr.transpose(1, 2).float(), is_causal=True).transpose(1, 2)
    err = ((o.float() - ref).norm() / ref.norm()).item()
    assert err < 1e-2, "attention: relative error %g" % err
    # nothing tuned without the mask: cuDNN's own choice (librooftune's fallback), else PyTorch's
    o2, info = rooftune.attention(q, k, v, db=db, causal=False, return_info=True)
    assert info.path in ("library", "torch") and info.template in ("cudnn", _fallback.TORCH_SDPA), info
    ref = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2).float(), kr.transpose(1, 2).float(),
                                                           vr.transpose(1, 2).float()).transpose(1, 2)
    err = ((o2.float() - ref).norm() / ref.norm()).item()
    assert err < 1e-2, "attention by %s: relative error %g" % (info.template, err)


def test_attention_without_cudnn_runs_torch():
    """A causal mask cuDNN refuses (SQ > SKV with no per-sequence lengths): PyTorch computes it,
    the queries that attend no key get 0, and the info says why."""
    q = torch.randn(2, 64, 4, 64, device="cuda", dtype=torch.float16)
    k = torch.randn(2, 32, 4, 64, device="cuda", dtype=torch.float16)
    v = torch.randn(2, 32, 4, 64, device="cuda", dtype=torch.float16)
    lse = torch.empty(2, 4, 64, device="cuda", dtype=torch.float32)
    o, info = rooftune.attention(q, k, v, causal=True, lse=lse, return_info=True)
    assert info.path == "torch" and info.template == _fallback.TORCH_SDPA, info
    assert "cuDNN" in info.reason and "ERR_" in info.reason, info.reason
    ref = _fallback.torch_attention(q.cpu().float(), k.cpu().float(), v.cpu().float(), causal=True)
    err = ((o.cpu().float() - ref).norm() / ref.norm()).item()
    assert err < 1e-2 and torch.all(o[:, :32] == 0), "relative error %g" % err
    assert torch.all(torch.isinf(lse[:, :, :32]))
