"""rooftune.attention's last resort (rooftune/_fallback.py) on the host: only librooftune's
"nothing for this call" answers (ERR_NOT_FOUND, ERR_UNSUPPORTED) go to PyTorch, any other error
is raised as it is; and torch_attention, what PyTorch then computes, against a float64
reference in rooftune's layouts (grouped heads, the bottom-right causal mask, per-sequence
lengths with a query that attends no key, a paged cache read through a shuffled block table, a
scale of the caller's, the log-sum-exp), on CPU tensors.  The PyTorch parts skip without it."""
import math

import pytest

import rooftune
from rooftune import _fallback


def test_only_nothing_goes_to_torch():
    def invalid(*a, **kw):
        raise rooftune.RooftuneError(1, "rooftune_attention: a bad argument")  # ERR_INVALID

    with pytest.raises(rooftune.RooftuneError) as e:
        _fallback.sdpa_fallback(invalid)(None, None, None)
    assert e.value.name == "ERR_INVALID"
    assert _fallback.sdpa_fallback(lambda *a, **kw: "served")(None, None, None) == "served"
    assert set(_fallback.NOTHING) == {"ERR_NOT_FOUND", "ERR_UNSUPPORTED"}
    info = _fallback.TorchInfo("why")
    assert info.path == "torch" and info.template == "torch.nn.functional.scaled_dot_product_attention"
    assert rooftune.attention.__doc__ and "scaled_dot_product_attention" in rooftune.attention.__doc__


def reference(q, k, v, causal, lens, scale, table=None):
    """float64 loops: O and the LSE, [B, SQ, HQ, D] and [B, HQ, SQ]."""
    import torch

    B, SQ, HQ, D = q.shape
    HKV = k.shape[2]
    o = torch.zeros(B, SQ, HQ, D, dtype=torch.float64)
    lse = torch.full((B, HQ, SQ), -math.inf, dtype=torch.float64)
    for b in range(B):
        if table is not None:
            kb = torch.cat([k[p] for p in table[b].tolist()])
            vb = torch.cat([v[p] for p in table[b].tolist()])
        else:
            kb, vb = k[b], v[b]
        n = int(lens[b])
        for h in range(HQ):
            g = h // (HQ // HKV)
            for i in range(SQ):
                last = min(n - 1, i + n - SQ) if causal else n - 1
                if last < 0:
                    continue
                s = (kb[: last + 1, g].double() @ q[b, i, h].double()) * scale
                m = s.max()
                e = torch.exp(s - m)
                lse[b, h, i] = m + torch.log(e.sum())
                o[b, i, h] = (e / e.sum()) @ vb[: last + 1, g].double()
    return o, lse


def close(got, want, what, tol=1e-4):
    import torch

    fin = torch.isfinite(want)
    assert torch.equal(torch.isfinite(got), fin), what
    err = ((got[fin].double() - want[fin]).norm() / max(want[fin].norm().item(), 1e-30)).item()
    assert err < tol, "%s: relative error %g" % (what, err)


@pytest.mark.parametrize("case", ["gqa_causal", "ragged_causal", "paged_ragged", "scale"])
def test_torch_attention(case):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    g = torch.Generator().manual_seed(7)
    B, HQ, HKV, D = 3, 4, 2, 16
    SQ, SKV = (5, 9) if case != "paged_ragged" else (1, 24)
    causal = case in ("gqa_causal", "ragged_causal")
    q = torch.randn(B, SQ, HQ, D, generator=g)
    lens = torch.tensor([SKV, 3, 7], dtype=torch.int32) if case in ("ragged_causal", "paged_ragged") else None
    scale = 0.37 if case == "scale" else None
    table = None
    if case == "paged_ragged":  # pools of 8-token pages, every sequence's pages in reverse order
        page, pages = 8, SKV // 8
        k = torch.randn(B * pages, page, HKV, D, generator=g)
        v = torch.randn(B * pages, page, HKV, D, generator=g)
        table = torch.arange(B * pages - 1, -1, -1, dtype=torch.int32).view(B, pages)
    else:
        k = torch.randn(B, SKV, HKV, D, generator=g)
        v = torch.randn(B, SKV, HKV, D, generator=g)
    lse = torch.empty(B, HQ, SQ)
    o = _fallback.torch_attention(q, k, v, causal=causal, lse=lse, block_table=table, kv_lens=lens, scale=scale)
    want_o, want_lse = reference(q, k, v, causal, lens if lens is not None else [SKV] * B,
                                 scale or 1 / math.sqrt(D), table)
    close(o, want_o, case + ": O")
    close(lse, want_lse, case + ": LSE")
    if case == "ragged_causal":  # sequence 1 has 3 keys for 5 queries: its first 2 attend none
        assert torch.all(o[1, :2] == 0) and torch.all(torch.isinf(lse[1, :, :2]))
