"""The hidden LIF scan as two Triton kernels, for training on a GPU.

arch._lif_fwd and arch._lif_bwd loop over the sequence in TorchScript: on a
GPU that is a dozen tiny kernels per token and block, thousands a training
step, and the step is bound by launching them. Here each (sequence, neuron)
pair is one lane of one kernel that walks the whole sequence, forward and
back, so a block's scan is one launch each way. The arithmetic is the same
as arch's, up to float rounding; check() compares the two.

Imported only when the input is on a CUDA device (arch.LIFScan), so the
CPU path, and CI, need no Triton.
"""
import torch
import triton
import triton.language as tl

BLOCK = 128  # neurons per program


@triton.jit
def _fwd(x_ptr, a_ptr, s_ptr, v_ptr, T, H, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = h < H
    a = tl.load(a_ptr + h, mask=m, other=0.0)
    v = tl.zeros([BLOCK], dtype=tl.float32)
    for t in range(T):
        off = (b * T + t) * H + h
        x = tl.load(x_ptr + off, mask=m, other=0.0)
        v = x + (v - x) * a
        s = tl.where(v > 1.0, 1.0, 0.0)
        tl.store(v_ptr + off, v, mask=m)
        tl.store(s_ptr + off, s, mask=m)
        v = v - s


@triton.jit
def _bwd(g_ptr, x_ptr, v_ptr, s_ptr, a_ptr, gx_ptr, ga_ptr, T, H, slope, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = h < H
    a = tl.load(a_ptr + h, mask=m, other=0.0)
    gnext = tl.zeros([BLOCK], dtype=tl.float32)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(T):
        t = T - 1 - i
        off = (b * T + t) * H + h
        v = tl.load(v_ptr + off, mask=m, other=0.0)
        g = tl.load(g_ptr + off, mask=m, other=0.0)
        x = tl.load(x_ptr + off, mask=m, other=0.0)
        d = 1.0 + slope * tl.abs(v - 1.0)
        gv = g / (d * d) + gnext * a  # dL/dv_t: its spike, and v'_t into v_{t+1}
        tl.store(gx_ptr + off, gv * (1.0 - a), mask=m)
        pm = m & (t > 0)
        prev = tl.load(v_ptr + off - H, mask=pm, other=0.0) - tl.load(s_ptr + off - H, mask=pm, other=0.0)
        acc += gv * (prev - x)
        gnext = gv
    tl.atomic_add(ga_ptr + h, acc, mask=m)


def _grid(B, H):
    return (B, triton.cdiv(H, BLOCK))


def lif_fwd(x, a):
    """arch._lif_fwd: (s, v) of LIF neurons over x (B, T, H) from rest."""
    x = x.contiguous()
    B, T, H = x.shape
    s, v = torch.empty_like(x), torch.empty_like(x)
    _fwd[_grid(B, H)](x, a.contiguous(), s, v, T, H, BLOCK=BLOCK)
    return s, v


def lif_bwd(g, x, v, s, a, slope):
    """arch._lif_bwd: the gradients of x and a."""
    B, T, H = x.shape
    gx = torch.empty_like(x)
    ga = torch.zeros(H, dtype=torch.float32, device=x.device)
    _bwd[_grid(B, H)](g.contiguous(), x, v, s, a.contiguous(), gx, ga, T, H, float(slope), BLOCK=BLOCK)
    return gx, ga.to(a.dtype)


def check(device="cuda"):
    """Compare the kernels with arch's TorchScript scan on random input;
    returns the largest differences, and raises if they disagree."""
    import arch

    g = torch.Generator(device="cpu").manual_seed(0)
    x = (torch.randn(8, 128, 373, generator=g) * 0.8 + 0.6).to(device)
    a = torch.rand(373, generator=g).to(device) * 0.9
    gr = torch.randn(8, 128, 373, generator=g).to(device)
    s0, v0 = arch._lif_fwd(x, a)
    s1, v1 = lif_fwd(x, a)
    gx0, ga0 = arch._lif_bwd(gr, x, v0, s0, a, 2.5)
    gx1, ga1 = lif_bwd(gr, x, v1, s1, a, 2.5)
    out = dict(spikes_differ=int((s0 != s1).sum()), v=float((v0 - v1).abs().max()),
               gx=float((gx0 - gx1).abs().max()), ga=float(((ga0 - ga1).abs() / ga0.abs().clamp(min=1)).max()))
    if out["spikes_differ"] or out["v"] > 1e-4 or out["gx"] > 1e-3 or out["ga"] > 1e-3:
        raise AssertionError("gpu LIF scan disagrees with arch's: %s" % out)
    return out
