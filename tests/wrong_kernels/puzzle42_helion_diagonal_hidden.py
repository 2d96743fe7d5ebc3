# The causal mask off by one: key < query hides each query's own key, so query 0 sees no key
# at all and its softmax is 0 / 0.
import math

import helion
import helion.language as hl
import torch

EXPECT_KIND = "nonfinite"
EXPECT_CASE = "classic"


@helion.kernel(autotune_effort="none")
def helion_causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
    b, h, nq, d = q.size()
    nk = k.size(2)
    d = hl.specialize(d)
    q_view, k_view, v_view = q.reshape(-1, nq, d), k.reshape(-1, nk, d), v.reshape(-1, nk, d)
    o = torch.empty_like(q)
    lse = torch.empty([b, h, nq], dtype=torch.float32, device=q.device)
    o_view, lse_view = o.reshape(-1, nq, d), lse.reshape(-1, nq)
    scale = 1.0 / math.sqrt(d)
    for tile_bh, tile_q in hl.tile([b * h, nq]):
        qt = q_view[tile_bh, tile_q, :]
        m = hl.full([tile_bh, tile_q], float("-inf"), dtype=torch.float32)
        l = hl.zeros([tile_bh, tile_q], dtype=torch.float32)
        acc = hl.zeros([tile_bh, tile_q, d], dtype=torch.float32)
        for tile_k in hl.tile(nk):
            s = hl.dot(qt, k_view[tile_bh, tile_k, :].transpose(1, 2)) * scale
            s = torch.where(tile_k.index[None, None, :] < tile_q.index[None, :, None], s, float("-inf"))
            m_new = torch.maximum(m, torch.amax(s, dim=2))
            alpha = torch.exp(m - m_new)
            p = torch.exp(s - m_new[:, :, None])
            l = l * alpha + p.sum(dim=2)
            acc = hl.dot(p.to(v.dtype), v_view[tile_bh, tile_k, :], acc=acc * alpha[:, :, None])
            m = m_new
        o_view[tile_bh, tile_q, :] = (acc / l[:, :, None]).to(o.dtype)
        lse_view[tile_bh, tile_q] = m + torch.log(l)
    return o, lse
