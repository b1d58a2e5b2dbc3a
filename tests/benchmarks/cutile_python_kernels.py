"""The benchmark's kernels written in cuTile Python (NVIDIA's `cuda-tile` package), with the
same algorithms and tilings as ours in rust_examples/: what tests/benchmarks/bench_cutile_python.py
times next to our kernels and torch. Imported only on a machine with `cuda-tile` installed.

Kernel parameters other than compile-time constants carry no annotation: cuTile reads the
annotations of a kernel's parameters as their kinds (`ct.Constant[int]`).
"""

import math

import cuda.tile as ct


@ct.kernel
def add(x, y, z, TILE: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(TILE,))
    b = ct.load(y, index=(i,), shape=(TILE,))
    ct.store(z, index=(i,), tile=a + b)


@ct.kernel
def softmax_rows(x, y, BM: ct.Constant[int], N: ct.Constant[int]):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(BM, N))
    m = ct.max(t, axis=1, keepdims=True)
    e = ct.exp(t - m)
    s = ct.sum(e, axis=1, keepdims=True)
    ct.store(y, index=(i, 0), tile=e / s)


@ct.kernel
def rms_norm_rows(x, w, y, eps: float, BM: ct.Constant[int], N: ct.Constant[int]):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(BM, N))
    tw = ct.reshape(ct.load(w, index=(0,), shape=(N,)), (1, N))
    ms = ct.sum(t * t, axis=1, keepdims=True) / N
    ct.store(y, index=(i, 0), tile=t * ct.rsqrt(ms + eps) * tw)


@ct.kernel
def gemm_grouped(
    x,
    y,
    z,
    BM: ct.Constant[int],
    BN: ct.Constant[int],
    BK: ct.Constant[int],
    GROUP: ct.Constant[int],
):
    # grouped order: GROUP rows of output tiles at a time (L2 reuse of y's columns)
    pid = ct.bid(0)
    m_tiles = ct.cdiv(z.shape[0], BM)
    n_tiles = ct.cdiv(z.shape[1], BN)
    in_group = GROUP * n_tiles
    first_m = (pid // in_group) * GROUP
    rows = min(m_tiles - first_m, GROUP)
    m = first_m + (pid % in_group) % rows
    n = (pid % in_group) // rows
    acc = ct.full((BM, BN), 0.0, dtype=ct.float32)
    for kk in range(ct.cdiv(x.shape[1], BK)):
        a = ct.load(x, index=(m, kk), shape=(BM, BK), latency=4)
        b = ct.load(y, index=(kk, n), shape=(BK, BN), latency=4)
        acc = ct.mma(a, b, acc)
    ct.store(z, index=(m, n), tile=ct.astype(acc, z.dtype))


def online_softmax_step(q, s, tv, m_i, l_i, acc, qk_scale):
    """One key block of the online (base-2) softmax: raw scores `s`, values `tv`; the running
    row maximum, row sum and accumulator come back updated (p . v in q's element type)."""
    m_new = max(m_i, ct.max(s, axis=1, keepdims=True) * qk_scale)
    p = ct.exp2(s * qk_scale - m_new, flush_to_zero=True)
    alpha = ct.exp2(m_i - m_new, flush_to_zero=True)
    l_new = l_i * alpha + ct.sum(p, axis=1, keepdims=True)
    return m_new, l_new, ct.mma(ct.astype(p, q.dtype), tv, acc * alpha)


@ct.kernel
def attention(
    q,
    k,
    v,
    o,
    qk_scale: float,
    BM: ct.Constant[int],
    BN: ct.Constant[int],
    D: ct.Constant[int],
    CAUSAL: ct.Constant[int],
):
    # q, k, v, o: [B * H, L, D]; grid (L / BM, B * H): query blocks of one head side by side
    mb = ct.bid(0)
    bh = ct.bid(1)
    length = k.shape[1]
    tq = ct.reshape(ct.load(q, index=(bh, mb, 0), shape=(1, BM, D)), (BM, D))
    m_i = ct.full((BM, 1), -math.inf, dtype=ct.float32)
    l_i = ct.full((BM, 1), 0.0, dtype=ct.float32)
    acc = ct.full((BM, D), 0.0, dtype=ct.float32)
    first_row = mb * BM
    full_blocks = length // BN
    unmasked = full_blocks
    end = ct.cdiv(length, BN)
    if CAUSAL:
        unmasked = min(first_row // BN, full_blocks)
        end = min(ct.cdiv(first_row + BM, BN), end)
    for j in range(unmasked):
        tk = ct.reshape(ct.load(k, index=(bh, j, 0), shape=(1, BN, D), latency=2), (BN, D))
        tv = ct.reshape(ct.load(v, index=(bh, j, 0), shape=(1, BN, D), latency=2), (BN, D))
        s = ct.mma(tq, ct.transpose(tk), ct.full((BM, BN), 0.0, dtype=ct.float32))
        m_i, l_i, acc = online_softmax_step(q, s, tv, m_i, l_i, acc, qk_scale)
    for j in range(unmasked, end):
        tk = ct.reshape(ct.load(k, index=(bh, j, 0), shape=(1, BN, D)), (BN, D))
        tv = ct.reshape(ct.load(v, index=(bh, j, 0), shape=(1, BN, D)), (BN, D))
        s = ct.mma(tq, ct.transpose(tk), ct.full((BM, BN), 0.0, dtype=ct.float32))
        rows = first_row + ct.reshape(ct.arange(BM, dtype=ct.int32), (BM, 1))
        cols = j * BN + ct.reshape(ct.arange(BN, dtype=ct.int32), (1, BN))
        visible = cols < length
        if CAUSAL:
            visible = visible & (rows >= cols)
        s = ct.where(visible, s, -math.inf)
        m_i, l_i, acc = online_softmax_step(q, s, tv, m_i, l_i, acc, qk_scale)
    out = ct.astype(acc / l_i, o.dtype)
    ct.store(o, index=(bh, mb, 0), tile=ct.reshape(out, (1, BM, D)))
