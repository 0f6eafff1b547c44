"""rooftune.attention's last resort: PyTorch's own attention.

librooftune serves an attention call with a tuned kernel, else with cuDNN's fused attention (its
vendor library, loaded at run time).  Where it has neither for a call (nothing tuned serves it
and cuDNN is not installed, or cannot run the problem: librooftune answers ERR_NOT_FOUND or
ERR_UNSUPPORTED), rooftune.attention computes it with torch.nn.functional.
scaled_dot_product_attention instead, over the same tensors and with the same meaning (grouped
heads, the bottom-right causal mask, per-sequence lengths, a paged cache read through its block
table, the log-sum-exp), and its info says so: path "torch", and why librooftune had nothing.
Any other error of librooftune is raised as it is.
"""
import functools
import math

NOTHING = ("ERR_NOT_FOUND", "ERR_UNSUPPORTED")  # librooftune has no kernel and no cuDNN for the call
TORCH_SDPA = "torch.nn.functional.scaled_dot_product_attention"


class TorchInfo:
    """A CallInfo for a call PyTorch computed: path "torch", template TORCH_SDPA, and the reason
    (librooftune's message saying why it had nothing)."""

    def __init__(self, reason):
        self.path = "torch"
        self.template = TORCH_SDPA
        self.config = ""
        self.reason = reason
        self.shape = ""
        self.distance = 0.0
        self.passed_over = []
        self.verified = False  # no tuned winner ran

    def __repr__(self):
        return "<rooftune.CallInfo torch: %s (%s)>" % (self.template, self.reason)


def torch_attention(q, k, v, out=None, causal=False, lse=None, block_table=None, kv_lens=None, scale=None):
    """O = softmax(scale * Q K^T) V in rooftune.attention's layouts with PyTorch (any device):
    q (B, SQ, HQ, D); k, v (B, SKV, HKV, D), or pools (num_pages, page_size, HKV, D) read through
    block_table (B, pages); kv_lens (B,) keys per sequence; causal: query i attends key j when
    j <= i + kv_len - SQ.  A query that attends no key gets O = 0 and LSE = -inf."""
    import torch
    import torch.nn.functional as F

    B, SQ, HQ, D = q.shape
    if block_table is not None:  # gather each sequence's pages in order
        pages, page = block_table.shape[1], k.shape[1]
        idx = block_table.long()
        k = k[idx].reshape(B, pages * page, k.shape[2], D)
        v = v[idx].reshape(B, pages * page, v.shape[2], D)
    SKV, HKV = k.shape[1], k.shape[2]
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, H, S, D)
    if HKV != HQ:  # query head h reads KV head h // (HQ / HKV)
        kt = kt.repeat_interleave(HQ // HKV, dim=1)
        vt = vt.repeat_interleave(HQ // HKV, dim=1)
    lens = kv_lens.to(device=q.device, dtype=torch.long) if kv_lens is not None else \
        torch.full((B,), SKV, device=q.device, dtype=torch.long)
    j = torch.arange(SKV, device=q.device).view(1, 1, SKV)
    i = torch.arange(SQ, device=q.device).view(1, SQ, 1)
    L = lens.view(B, 1, 1)
    keep = (j < L).expand(B, SQ, SKV)
    if causal:
        keep = keep & (j <= i + L - SQ)
    mask = keep.unsqueeze(1)  # (B, 1, SQ, SKV), the same for every head
    s = float(scale) if scale else 1.0 / math.sqrt(D)
    o = F.scaled_dot_product_attention(qt, kt, vt, attn_mask=mask, scale=s)
    o = o.masked_fill(~mask.any(-1, keepdim=True), 0)  # rows with no key: 0, not NaN
    if out is None:
        out = torch.empty_like(q)
    out.copy_(o.transpose(1, 2))
    if lse is not None:
        scores = torch.matmul(qt.float(), kt.float().transpose(-1, -2)) * s
        lse.copy_(torch.logsumexp(scores.masked_fill(~mask, float("-inf")), dim=-1))
    return out


def sdpa_fallback(call):
    """Wraps rooftune.attention (call): when librooftune has nothing for the call, PyTorch
    computes it (torch_attention) and the info says so."""

    @functools.wraps(call)
    def attention(q, k, v, out=None, db=None, causal=False, lse=None, block_table=None, kv_lens=None, scale=None,
                  return_info=False):
        from . import RooftuneError

        try:
            return call(q, k, v, out=out, db=db, causal=causal, lse=lse, block_table=block_table, kv_lens=kv_lens,
                        scale=scale, return_info=return_info)
        except RooftuneError as e:
            if e.name not in NOTHING:
                raise
            reason = "librooftune has no kernel for this call and cuDNN cannot run it (%s: %s); %s ran" % (
                e.name, e.message, TORCH_SDPA)
        import torch

        with torch.cuda.device(q.device):  # the call checked that the tensors are on one CUDA device
            o = torch_attention(q, k, v, out, causal, lse, block_table, kv_lens, scale)
        return (o, TorchInfo(reason)) if return_info else o

    return attention
