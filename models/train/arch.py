"""Candidate neuro-1 architectures, written node by node for package snn.

Every operation below is one node of an snn.Graph with the simulator's exact
semantics (snn/doc.go), run with one timestep of DT seconds per token:

  * Linear / Affine synapses: y = W x (+ b).
  * LI (leaky integrator), zero-order hold, v_leak = 0, R = 1:
        v <- R x + (v - R x) * a,   a = exp(-DT / tau)
    i.e. v_t = a v_{t-1} + (1 - a) x_t, starting at v = 0.
  * LIF with ResetSubtract, R = 1, v_reset = 0, v_threshold = 1:
        v <- v_leak + x + (v - v_leak - x) * a ; s = (v > 1) ; v <- v - s
  * Threshold: s = (x > threshold), threshold 0 here (the bias of the Affine
    before it carries the learned threshold).
  * Scale with s = 1 as a summing junction (a node's input is the sum of its
    incoming edges), for residual currents.

No softmax, normalisation, exp of activations or products of two
activations inside the network: the exp() calls below only turn the learned
time constants into decay factors, exactly as the simulator does once when
it compiles a graph. The softmax of the readout is the host's.

Spikes use a straight (v > threshold) forward pass and a fast-sigmoid
surrogate gradient 1 / (1 + k |v - threshold|)^2.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

DT = 1e-3  # seconds per timestep; one timestep per token


class SpikeFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, slope):
        ctx.save_for_backward(x)
        ctx.slope = slope
        return (x > 0).to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / (1.0 + ctx.slope * x.abs()) ** 2, None


def spike(x, slope=5.0):
    """1 where x > 0 (strictly), else 0; surrogate gradient in backward."""
    return SpikeFn.apply(x, slope)


def decay_logit(tau_tokens):
    """Parameter p with sigmoid(p) = a = exp(-1/tau) for tau in tokens (steps)."""
    a = torch.exp(-1.0 / torch.as_tensor(tau_tokens, dtype=torch.float32))
    return torch.log(a) - torch.log1p(-a)


def tau_seconds(p):
    """The snn time constant tau (seconds) of a decay parameter p: a = exp(-DT/tau)."""
    a = torch.sigmoid(p.detach().double())
    return (-DT / torch.log(a)).float()


def li_scan(x, a, chunk=16):
    """LI over a sequence, in parallel: v_t = a v_{t-1} + (1 - a) x_t, v_{-1} = 0.

    x: (B, T, C); a: (C,) in (0, 1). Within chunks of `chunk` steps it is a
    causal convolution with the explicit (C, chunk, chunk) kernel
    (1 - a) a^(t-s); the state at each chunk's end is carried into the next,
    decayed by a^(t+1). The same values as the step recurrence up to float
    rounding (4e-16 in float64), and about 19 times faster to train than one
    (C, T, T) kernel at T = 128.
    """
    B, T, C = x.shape
    pad = (-T) % chunk
    if pad:
        x = F.pad(x, (0, 0, 0, pad))
    N = x.shape[1] // chunk
    n = torch.arange(chunk, device=x.device)
    lag = (n[:, None] - n[None, :]).to(x.dtype)  # t - s
    loga = torch.log(a)
    k = torch.exp(loga[:, None, None] * lag.clamp(min=0)) * (1 - a)[:, None, None] * (lag >= 0)
    y = torch.einsum("bnsc,cts->bntc", x.reshape(B, N, chunk, C), k)
    decay = torch.exp(loga[None, :] * (n[:, None] + 1).to(x.dtype))  # (chunk, C): a^(t+1)
    h = x.new_zeros(B, C)
    out = []
    for i in range(N):
        yi = y[:, i] + decay[None] * h[:, None, :]
        out.append(yi)
        h = yi[:, -1]
    return torch.stack(out, 1).reshape(B, N * chunk, C)[:, :T]


@torch.jit.script
def _lif_fwd(x, a):
    """LIF over a sequence (B, T, H) from rest: v_t = x_t + (v'_{t-1} - x_t) a,
    s_t = (v_t > 1), v'_t = v_t - s_t. Returns s and v (before the reset)."""
    v = torch.zeros_like(x[:, 0])
    vs, ss = [], []
    for t in range(x.shape[1]):
        v = x[:, t] + (v - x[:, t]) * a
        s = (v > 1.0).to(x.dtype)
        vs.append(v)
        ss.append(s)
        v = v - s
    return torch.stack(ss, 1), torch.stack(vs, 1)


@torch.jit.script
def _lif_bwd(g, x, v, s, a, slope: float):
    """Backpropagation through time of _lif_fwd, the reset detached and the
    spike's gradient the fast-sigmoid surrogate at v - 1."""
    T = x.shape[1]
    gv_next = torch.zeros_like(x[:, 0])
    gx = torch.empty_like(x)
    ga = torch.zeros_like(a)
    sur = g / (1.0 + slope * (v - 1.0).abs()) ** 2
    for t in range(T - 1, -1, -1):
        gv = sur[:, t] + gv_next * a  # dL/dv_t: its spike, and v'_t into v_{t+1}
        gx[:, t] = gv * (1.0 - a)
        prev = v[:, t - 1] - s[:, t - 1] if t > 0 else torch.zeros_like(x[:, 0])
        ga += (gv * (prev - x[:, t])).sum(0)
        gv_next = gv
    return gx, ga


class LIFScan(torch.autograd.Function):
    """The hidden LIF neurons over a sequence, with a hand-written backward
    (an autograd graph of T small steps is most of a step's time on CPU)."""

    @staticmethod
    def forward(ctx, x, a, slope):
        if x.is_cuda:  # one kernel per scan instead of a dozen per token (gpu.py)
            import gpu
            x = x.contiguous()
            s, v = gpu.lif_fwd(x, a)
        else:
            s, v = _lif_fwd(x, a)
        ctx.save_for_backward(x, v, s, a)
        ctx.slope = slope
        return s

    @staticmethod
    def backward(ctx, g):
        x, v, s, a = ctx.saved_tensors
        if x.is_cuda:
            import gpu
            gx, ga = gpu.lif_bwd(g, x, v, s, a, ctx.slope)
        else:
            gx, ga = _lif_bwd(g.contiguous(), x, v, s, a, float(ctx.slope))
        return gx, ga, None


@torch.jit.script
def _rec_fwd(x, a, p, q):
    """_lif_fwd with the last step's spikes fed back: the input of step t is
    x_t + p q s_{t-1} (p: (H, R), q: (R, H), a rank-R recurrence). Returns s
    and v (before the reset)."""
    v = torch.zeros_like(x[:, 0])
    s = torch.zeros_like(x[:, 0])
    vs, ss = [], []
    for t in range(x.shape[1]):
        xt = x[:, t] + (s @ q.t()) @ p.t()
        v = xt + (v - xt) * a
        s = (v > 1.0).to(x.dtype)
        vs.append(v)
        ss.append(s)
        v = v - s
    return torch.stack(ss, 1), torch.stack(vs, 1)


@torch.jit.script
def _rec_bwd(g, x, v, s, a, p, q, slope: float):
    """Backpropagation through time of _rec_fwd (the reset detached, the
    spike's gradient the fast-sigmoid surrogate at v - 1): the gradients of
    x, a, p and q."""
    T = x.shape[1]
    gv_next = torch.zeros_like(x[:, 0])
    gx_next = torch.zeros_like(x[:, 0])
    gx = torch.empty_like(x)
    ga = torch.zeros_like(a)
    sur = 1.0 / (1.0 + slope * (v - 1.0).abs()) ** 2
    prev_s = F.pad(s, [0, 0, 1, 0])[:, :-1]  # s_{t-1}, 0 at t = 0
    xin = x + (prev_s @ q.t()) @ p.t()  # each step's whole input
    for t in range(T - 1, -1, -1):
        gs = g[:, t] + (gx_next @ p) @ q  # its spike: the loss, and x_{t+1}
        gv = gs * sur[:, t] + gv_next * a
        gxt = gv * (1.0 - a)
        gx[:, t] = gxt
        prev = v[:, t - 1] - s[:, t - 1] if t > 0 else torch.zeros_like(x[:, 0])
        ga += (gv * (prev - xin[:, t])).sum(0)
        gv_next = gv
        gx_next = gxt
    c = prev_s @ q.t()  # (B, T, R)
    gp = torch.einsum("bth,btr->hr", gx, c)
    gq = torch.einsum("btr,bth->rh", gx @ p, prev_s)
    return gx, ga, gp, gq


class RecLIFScan(torch.autograd.Function):
    """LIFScan with the block's spikes of the last token fed back into the
    neurons' input through a rank-R product p q."""

    @staticmethod
    def forward(ctx, x, a, p, q, slope):
        s, v = _rec_fwd(x, a, p, q)
        ctx.save_for_backward(x, v, s, a, p, q)
        ctx.slope = slope
        return s

    @staticmethod
    def backward(ctx, g):
        x, v, s, a, p, q = ctx.saved_tensors
        gx, ga, gp, gq = _rec_bwd(g.contiguous(), x, v, s, a, p, q, float(ctx.slope))
        return gx, ga, gp, gq, None


@torch.jit.script
def _adapt_fwd(x, a, c, r):
    """_lif_fwd with each neuron's spikes fed back to itself through a
    leaky integrator: w_t = r w_{t-1} + (1 - r) s_t, and the input of step
    t is x_t + c w_{t-1}. c < 0 is spike-frequency adaptation (a neuron
    that fired is harder to fire), c > 0 keeps a neuron firing. Returns s,
    v (before the reset) and w."""
    v = torch.zeros_like(x[:, 0])
    w = torch.zeros_like(x[:, 0])
    vs, ss, ws = [], [], []
    for t in range(x.shape[1]):
        xt = x[:, t] + c * w
        v = xt + (v - xt) * a
        s = (v > 1.0).to(x.dtype)
        vs.append(v)
        ss.append(s)
        v = v - s
        w = s + (w - s) * r
        ws.append(w)
    return torch.stack(ss, 1), torch.stack(vs, 1), torch.stack(ws, 1)


@torch.jit.script
def _adapt_bwd(g, x, v, s, w, a, c, r, slope: float):
    """Backpropagation through time of _adapt_fwd (the reset detached, the
    spike's gradient the fast-sigmoid surrogate at v - 1): the gradients
    of x, a, c and r."""
    T = x.shape[1]
    zero = torch.zeros_like(x[:, 0])
    gv_next = zero  # dL/dv_{t+1}
    gw_next = zero  # dL/dw_t through w_{t+1} and x_{t+1}
    gx_next = zero
    gx = torch.empty_like(x)
    ga = torch.zeros_like(a)
    gc = torch.zeros_like(c)
    gr = torch.zeros_like(r)
    sur = 1.0 / (1.0 + slope * (v - 1.0).abs()) ** 2
    for t in range(T - 1, -1, -1):
        gw = c * gx_next + r * gw_next  # dL/dw_t
        gs = g[:, t] + (1.0 - r) * gw
        gv = gs * sur[:, t] + gv_next * a
        gxt = gv * (1.0 - a)
        gx[:, t] = gxt
        w_prev = w[:, t - 1] if t > 0 else zero
        prev = v[:, t - 1] - s[:, t - 1] if t > 0 else zero
        ga += (gv * (prev - (x[:, t] + c * w_prev))).sum(0)
        gc += (gxt * w_prev).sum(0)
        gr += (gw * (w_prev - s[:, t])).sum(0)
        gv_next = gv
        gw_next = gw
        gx_next = gxt
    return gx, ga, gc, gr


class AdaptLIFScan(torch.autograd.Function):
    """LIFScan with each neuron's own spikes fed back through a leaky
    integrator (decay r, coupling c), one step late."""

    @staticmethod
    def forward(ctx, x, a, c, r, slope):
        s, v, w = _adapt_fwd(x, a, c, r)
        ctx.save_for_backward(x, v, s, w, a, c, r)
        ctx.slope = slope
        return s

    @staticmethod
    def backward(ctx, g):
        x, v, s, w, a, c, r = ctx.saved_tensors
        gx, ga, gc, gr = _adapt_bwd(g.contiguous(), x, v, s, w, a, c, r, float(ctx.slope))
        return gx, ga, gc, gr, None


@torch.jit.script
def _hold_fwd(z, v):
    """Hold neurons over a sequence (B, T, G) from 0: c_t = c_{t-1} + z_t (v_t - c_{t-1}),
    i.e. each takes its value current v_t on a timestep its gate fires (z_t = 1)
    and keeps it otherwise."""
    c = torch.zeros_like(v[:, 0])
    cs = []
    for t in range(v.shape[1]):
        c = c + z[:, t] * (v[:, t] - c)
        cs.append(c)
    return torch.stack(cs, 1)


@torch.jit.script
def _hold_bwd(g, z, v, c):
    """Backpropagation through time of _hold_fwd, to both z and v."""
    gz = torch.empty_like(z)
    gv = torch.empty_like(v)
    carry = torch.zeros_like(v[:, 0])  # dL/dc_t through c_{t+1}
    for t in range(v.shape[1] - 1, -1, -1):
        G = g[:, t] + carry
        prev = c[:, t - 1] if t > 0 else torch.zeros_like(v[:, 0])
        gv[:, t] = G * z[:, t]
        gz[:, t] = G * (v[:, t] - prev)
        carry = G * (1.0 - z[:, t])
    return gz, gv


class HoldScan(torch.autograd.Function):
    """The hold neurons over a sequence: gates z (spikes, with their
    surrogate gradient applied outside) and value currents v."""

    @staticmethod
    def forward(ctx, z, v):
        c = _hold_fwd(z, v)
        ctx.save_for_backward(z, v, c)
        return c

    @staticmethod
    def backward(ctx, g):
        z, v, c = ctx.saved_tensors
        return _hold_bwd(g.contiguous(), z, v, c)


def li_step(v, x, a):
    """One LI step exactly as snn writes it (zero-order hold, v_leak 0, R 1)."""
    return x + (v - x) * a


class LimaBlock(nn.Module):
    """LI token mixing then a spiking MLP, both added to the residual current.

    Graph: u -> mix_in (Linear k x d) -> mix (LI, k) -> mix_out (Linear d x k) -> s
           u -> s (Scale 1, junction)
           s -> fc1 (Affine h x d) -> spk (Threshold 0) -> fc2 (Linear d x h) -> out
           s -> out (Scale 1, junction)
    with optional shift channels (u -> shift_in -> Delay -> shift_out -> s),
    shift2 channels (the same, two steps) and rec channels: the hidden
    spikes of the previous token, rec_out(rec_in(spk)), added to s. The
    importer (models/lima) builds rec as spk -> rec_in -> Delay -> rec_out ->
    out and a cycle spk -> (fc1 rec_out rec_in) -> spk, the same values.
    hold neurons (training only: snn has no node that multiplies a spike
    and a current, so models/lima refuses their tensors) keep a value of
    s until their gate fires: s -> hold_v, s -> hold_g -> gate (Threshold),
    c <- c + gate (hold_v(s) - c), s += hold_out(c), before fc1.
    tern mirrors the hidden neurons on the negated current: fc1 -> neg
    (Scale -1) -> spk_neg -> neg_out (Scale -1) -> fc2.
    """

    def __init__(self, d, k, h, tau_min=1.0, tau_max=128.0, fanin=False, lif=False, shift=0, shift2=0, rec=0, adapt=False, hold=0, tern=False):
        super().__init__()
        self.mix_in = nn.Linear(d, k, bias=False)
        self.mix_out = nn.Linear(k, d, bias=False)
        # shift: channels that carry the previous token's residual current
        # exactly (a Delay of one step), beside the LI channels' exponential
        # averages, which cannot single it out.
        self.shift_in = self.shift_out = None
        if shift:
            self.shift_in = nn.Linear(d, shift, bias=False)
            self.shift_out = nn.Linear(shift, d, bias=False)
            nn.init.normal_(self.shift_out.weight, std=0.5 / math.sqrt(shift))
        # shift2: channels that carry the residual current of two tokens
        # back (a Delay of two steps in the graph).
        self.shift2_in = self.shift2_out = None
        if shift2:
            self.shift2_in = nn.Linear(d, shift2, bias=False)
            self.shift2_out = nn.Linear(shift2, d, bias=False)
            nn.init.normal_(self.shift2_out.weight, std=0.5 / math.sqrt(shift2))
        taus = torch.exp(torch.linspace(math.log(tau_min), math.log(tau_max), k))
        self.mix_p = nn.Parameter(decay_logit(taus))
        self.fc1 = nn.Linear(d, h, bias=True)
        self.fc2 = nn.Linear(h, d, bias=False)
        nn.init.normal_(self.mix_out.weight, std=0.5 / math.sqrt(k))
        # With fanin the residual current has O(1) elements and fc1 sums d
        # of them: the neurons start near threshold in every block, and
        # AdamW's steps are a few percent of fc1's weights, so fc1 can follow
        # the current as it grows.
        nn.init.normal_(self.fc1.weight, std=1.0 / math.sqrt(d) if fanin else 1.0)
        nn.init.constant_(self.fc1.bias, -1.0)
        nn.init.normal_(self.fc2.weight, std=0.5 / math.sqrt(h * 0.15))  # about 15% fire at init
        self.slope = 5.0  # the surrogate gradient's k; training only (train.py --slope)
        # lif: the hidden neurons are LIF (threshold 1, subtractive reset)
        # with a learned time constant each, instead of stateless Threshold
        # neurons; at a decay of 0 they are the same neuron (fc1's bias then
        # starts at 0, and v > 1 is fc1(s) > 0 with the bias at -1).
        self.spk_p = None
        if lif:
            nn.init.constant_(self.fc1.bias, 0.0)
            self.spk_p = nn.Parameter(decay_logit(torch.full((h,), 0.5)))
        # rec: channels that carry the block's own spikes of the previous
        # token, projected to rec channels and back into the residual
        # current (a cycle through the hidden neurons, one step late), so
        # that what the block fired on one token shapes what it fires on the
        # next, and what the blocks after it see.
        self.rec_in = self.rec_out = None
        if rec:
            if not lif:
                raise ValueError("rec channels need LIF hidden neurons (lif=1)")
            self.rec_in = nn.Linear(h, rec, bias=False)
            self.rec_out = nn.Linear(rec, d, bias=False)
            nn.init.normal_(self.rec_out.weight, std=0.5 / math.sqrt(rec))
        # adapt: each hidden neuron's spikes, through a leaky integrator of
        # its own (time constants spread over 2 to 64 tokens), back into its
        # input with a learned weight one step late: negative, it adapts
        # (fires less after firing); positive, it keeps firing. It starts
        # at 0, the model without it.
        self.adapt_p = self.adapt_w = None
        if adapt:
            if not lif or rec:
                raise ValueError("adapt needs LIF hidden neurons (lif=1) and no rec channels")
            self.adapt_p = nn.Parameter(decay_logit(torch.exp(torch.linspace(math.log(2.0), math.log(64.0), h))))
            self.adapt_w = nn.Parameter(torch.zeros(h))
        # hold: neurons that each keep one value of the residual current,
        # hold_v(s), and take a new one only on a timestep their gate fires
        # (Threshold neurons on hold_g(s)): a state the block writes
        # selectively, as a GRU's update gate does, with the gate a spike.
        # What they hold joins the residual current before fc1.
        self.hold_v = self.hold_g = self.hold_out = None
        if hold:
            if rec or adapt:
                raise ValueError("hold neurons do not combine with rec channels or adapt")
            self.hold_v = nn.Linear(d, hold, bias=False)
            self.hold_g = nn.Linear(d, hold, bias=True)
            nn.init.normal_(self.hold_g.weight, std=1.0 / math.sqrt(d) if fanin else 1.0)
            nn.init.constant_(self.hold_g.bias, -1.0)
            self.hold_out = nn.Linear(hold, d, bias=False)
            nn.init.normal_(self.hold_out.weight, std=0.5 / math.sqrt(hold))

        # tern: each hidden unit is a pair of mirrored neurons, one on fc1's
        # current and one on its negation, whose spikes enter fc2 with
        # opposite signs: a unit that says +1, 0 or -1 on each token, with
        # the weights of one neuron (the graph: fc1 -> spk and fc1 -> neg
        # (Scale -1) -> spk_neg, spk -> fc2 and spk_neg -> neg_out (Scale -1)
        # -> fc2). Each of the two has a membrane of its own. The buffer,
        # 1, marks such a block in the state_dict for the importer.
        self.register_buffer("tern", torch.ones(()) if tern else None)
        if tern and (rec or adapt or hold):
            raise ValueError("tern does not combine with rec channels, adapt or hold neurons")

    def _mirrored(self, x, a):
        """The hidden neurons' input and decays (a may be None), with tern
        those of the mirror appended: the negated input, the same decays."""
        if self.tern is None:
            return x, a
        return torch.cat([x, -x], -1), None if a is None else torch.cat([a, a])

    def _hidden(self, x):
        if self.spk_p is None:
            return spike(self._mirrored(x, None)[0], self.slope)
        if self.adapt_p is not None:
            return AdaptLIFScan.apply(x, torch.sigmoid(self.spk_p), self.adapt_w, torch.sigmoid(self.adapt_p), self.slope)
        if self.rec_in is not None:
            p = self.fc1.weight @ self.rec_out.weight
            return RecLIFScan.apply(x, torch.sigmoid(self.spk_p), p, self.rec_in.weight, self.slope)
        return LIFScan.apply(*self._mirrored(x, torch.sigmoid(self.spk_p)), self.slope)

    def _signed(self, spk):
        """What fc2 reads: the spikes, or with tern the pairs' differences."""
        if self.tern is None:
            return spk
        h = spk.shape[-1] // 2
        return spk[..., :h] - spk[..., h:]

    def forward(self, u):
        a = torch.sigmoid(self.mix_p)
        s = u + self.mix_out(li_scan(self.mix_in(u), a))
        if self.shift_in is not None:
            s = s + self.shift_out(F.pad(self.shift_in(u), (0, 0, 1, 0))[:, :-1])
        if self.shift2_in is not None:
            s = s + self.shift2_out(F.pad(self.shift2_in(u), (0, 0, 2, 0))[:, :-2])
        z = None
        if self.hold_v is not None:
            z = spike(self.hold_g(s), self.slope)
            s = s + self.hold_out(HoldScan.apply(z, self.hold_v(s)))
        spk = self._hidden(self.fc1(s))
        if self.rec_in is not None:
            # the scan added fc1 of this term to the neurons' input itself
            s = s + self.rec_out(F.pad(self.rec_in(spk), (0, 0, 1, 0))[:, :-1])
        # the gates are spiking neurons too, in the firing rate
        return s + self.fc2(self._signed(spk)), spk if z is None else torch.cat([spk, z], -1)

    def init_state(self, B, like):
        """The block's state from rest, by name: the LI mixing state; with
        lif the hidden membranes (v); with adapt their spikes' integrators
        (w); with shift the last token's shift input; with shift2 the last
        two tokens' shift2 inputs (the last first); with rec the last
        token's rec channels; with hold the values the hold neurons keep."""
        z = lambda n: like.new_zeros(B, n)  # noqa: E731
        st = dict(mix=z(self.mix_in.out_features))
        if self.spk_p is not None:
            st["v"] = z(self.fc1.out_features * (1 if self.tern is None else 2))
        if self.adapt_p is not None:
            st["w"] = z(self.fc1.out_features)
        if self.shift_in is not None:
            st["shift"] = z(self.shift_in.out_features)
        if self.shift2_in is not None:
            st["shift2"] = (z(self.shift2_in.out_features), z(self.shift2_in.out_features))
        if self.rec_in is not None:
            st["rec"] = z(self.rec_in.out_features)
        if self.hold_v is not None:
            st["hold"] = z(self.hold_v.out_features)
        return st

    def step(self, u, st):
        """One token from init_state's state: (output, spikes, state)."""
        a = torch.sigmoid(self.mix_p)
        new = dict(mix=li_step(st["mix"], self.mix_in(u), a))
        s = u + self.mix_out(new["mix"])
        if self.shift_in is not None:
            s = s + self.shift_out(st["shift"])
            new["shift"] = self.shift_in(u)
        if self.shift2_in is not None:
            s = s + self.shift2_out(st["shift2"][1])
            new["shift2"] = (self.shift2_in(u), st["shift2"][0])
        if self.hold_v is not None:
            gate = (self.hold_g(s) > 0).to(u.dtype)
            new["hold"] = st["hold"] + gate * (self.hold_v(s) - st["hold"])
            s = s + self.hold_out(new["hold"])
        if self.rec_in is not None:
            s = s + self.rec_out(st["rec"])
        x = self.fc1(s)
        if self.adapt_p is not None:
            x = x + self.adapt_w * st["w"]
        x, a = self._mirrored(x, None if self.spk_p is None else torch.sigmoid(self.spk_p))
        if self.spk_p is None:
            spk = (x > 0).to(u.dtype)
        else:
            v = li_step(st["v"], x, a)
            spk = (v > 1).to(u.dtype)
            new["v"] = v - spk
        if self.adapt_p is not None:
            new["w"] = li_step(st["w"], spk, torch.sigmoid(self.adapt_p))
        if self.rec_in is not None:
            new["rec"] = self.rec_in(spk)
        return s + self.fc2(self._signed(spk)), spk, new


class Lima(nn.Module):
    """(A) lima: leaky-integrator token mixing + spiking MLPs, residual currents.

    Graph: token (Input V, one-hot) -> embed (Linear d x V = E^T) -> blocks ->
    head (Affine V x d, weight E, bias b) -> logits (Output). Feed-forward, so
    one timestep per token computes the whole token and training runs in
    parallel over the sequence.
    """

    kind = "lima"

    def __init__(self, vocab, d=128, k=128, h=256, layers=3, fanin=False, lif=0, shift=0, shift2=0, rec=0, adapt=0, hold=0, tern=0, **_):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        # fanin puts every weight at its fan-in scale: an embedding of O(1)
        # elements and a fixed readout gain 1/sqrt(d) (head_scale: in the
        # state_dict, not trained) so that the logits start O(1). The first
        # parametrisation (embedding 1/sqrt(d), fc1 std 1) lets the threshold
        # neurons of every block after the first saturate within a few
        # hundred steps (RESULTS.md, neuro-1-heavy).
        nn.init.normal_(self.embed.weight, std=1.0 if fanin else 1.0 / math.sqrt(d))
        self.blocks = nn.ModuleList([LimaBlock(d, k, h, fanin=fanin, lif=bool(lif), shift=shift, shift2=shift2, rec=rec, adapt=bool(adapt), hold=hold, tern=bool(tern)) for _ in range(layers)])
        self.head_bias = nn.Parameter(torch.zeros(vocab))
        self.head_scale = None
        if fanin:
            self.head_scale = nn.Parameter(torch.tensor(1.0 / math.sqrt(d)), requires_grad=False)
        self.cfg = dict(vocab=vocab, d=d, k=k, h=h, layers=layers)
        if fanin:
            self.cfg["fanin"] = True
        if lif:
            self.cfg["lif"] = 1
        if shift:
            self.cfg["shift"] = shift
        if shift2:
            self.cfg["shift2"] = shift2
        if rec:
            self.cfg["rec"] = rec
        if adapt:
            self.cfg["adapt"] = 1
        if hold:
            self.cfg["hold"] = hold
        if tern:
            self.cfg["tern"] = 1

    def forward(self, idx):
        u = self.embed(idx)
        rates = []
        for b in self.blocks:
            u, spk = b(u)
            rates.append(spk.mean())
        return F.linear(u, self.head_weight(), self.head_bias), rates

    def head_weight(self):
        w = self.embed.weight
        return w if self.head_scale is None else self.head_scale * w

    def init_state(self, B):
        return [b.init_state(B, self.embed.weight) for b in self.blocks]

    @torch.no_grad()
    def step(self, tok, state):
        """One token, one timestep, as the simulator runs the graph: (logits, state)."""
        u = self.embed(tok)
        state = list(state)
        for i, b in enumerate(self.blocks):
            u, _, state[i] = b.step(u, state[i])
        return F.linear(u, self.head_weight(), self.head_bias), state

    def counts(self):
        c = self.cfg
        g = c.get("hold", 0)
        spiking = (c["h"] * (2 if c.get("tern") else 1) + g) * c["layers"]  # hold gates are Threshold neurons
        li = (c["k"] + c["h"] * c.get("adapt", 0)) * c["layers"]
        syn = c["vocab"] * c["d"] * 2 + c["layers"] * 2 * c["d"] * (c["k"] + c["h"] + c.get("shift", 0) + c.get("shift2", 0)) + c["layers"] * c.get("rec", 0) * (c["h"] + c["d"])
        syn += c["layers"] * 3 * c["d"] * g
        out = dict(spiking_neurons=spiking, li_neurons=li, synapses=syn)
        if g:
            out["hold_neurons"] = g * c["layers"]
        return out


class RLIF(nn.Module):
    """(B) recurrent LIF: two recurrent LIF layers (subtractive reset) and an LI readout.

    Graph: token (Input V) -> embed (Linear H x V = E^T) -> lif1 (LIF H)
           lif1 -> rec1 (Linear H x H) -> lif1        (cycle: one step late)
           lif1 -> ff (Linear H x H) -> lif2 (LIF H); lif2 -> rec2 (Linear) -> lif2
           lif2 -> head (Linear V x H = E) -> readout (LI V, v_leak = bias) -> logits
    LIF: tau, v_leak learned per neuron; R 1, v_threshold 1, v_reset 0,
    ResetSubtract. Readout LI: one learned tau and R for all, v_leak per token.
    Trained by backpropagation through time over the window.
    """

    kind = "rlif"

    def __init__(self, vocab, hidden=240, **_):
        super().__init__()
        H = hidden
        self.embed = nn.Embedding(vocab, H)
        nn.init.normal_(self.embed.weight, std=1.0)
        self.rec1 = nn.Linear(H, H, bias=False)
        self.ff = nn.Linear(H, H, bias=False)
        self.rec2 = nn.Linear(H, H, bias=False)
        for m in (self.rec1, self.rec2):
            nn.init.normal_(m.weight, std=0.5 / math.sqrt(H * 0.15))
        nn.init.normal_(self.ff.weight, std=2.0 / math.sqrt(H * 0.15))
        taus = torch.exp(torch.linspace(0.0, math.log(64.0), H))
        self.p1 = nn.Parameter(decay_logit(taus))
        self.p2 = nn.Parameter(decay_logit(taus))
        self.vleak1 = nn.Parameter(torch.full((H,), 0.5))
        self.vleak2 = nn.Parameter(torch.full((H,), 0.5))
        self.pr = nn.Parameter(decay_logit(torch.tensor([0.5])))
        self.r_out = nn.Parameter(torch.tensor([0.3]))
        self.out_bias = nn.Parameter(torch.zeros(vocab))
        self.cfg = dict(vocab=vocab, hidden=H)

    def forward(self, idx):
        B, T = idx.shape
        H = self.cfg["hidden"]
        x1 = self.embed(idx)  # (B,T,H)
        a1, a2, ar = torch.sigmoid(self.p1), torch.sigmoid(self.p2), torch.sigmoid(self.pr)
        # snn starts every neuron at rest: v = v_leak
        v1 = self.vleak1.expand(B, H)
        v2 = self.vleak2.expand(B, H)
        s1 = x1.new_zeros(B, H)
        s2 = x1.new_zeros(B, H)
        outs, r1, r2 = [], [], []
        for t in range(T):
            i1 = self.vleak1 + x1[:, t] + self.rec1(s1)
            v1 = i1 + (v1 - i1) * a1
            s1 = spike(v1 - 1.0)
            v1 = v1 - s1.detach()
            i2 = self.vleak2 + self.ff(s1) + self.rec2(s2)
            v2 = i2 + (v2 - i2) * a2
            s2 = spike(v2 - 1.0)
            v2 = v2 - s2.detach()
            outs.append(s2)
            r1.append(s1)
            r2.append(s2)
        S2 = torch.stack(outs, 1)  # (B,T,H)
        # readout LI (v_leak = out_bias, R = r_out), starting at rest (v = v_leak):
        # y_t - v_leak = a (y_{t-1} - v_leak) + (1 - a) R x_t, a scan over T
        z = self.r_out * F.linear(S2, self.embed.weight)
        y = self.out_bias + li_scan(z, ar.expand(z.shape[-1]))
        rates = [torch.stack(r1, 1).mean(), torch.stack(r2, 1).mean()]
        return y, rates

    def init_state(self, B):
        H = self.cfg["hidden"]
        return dict(v1=self.vleak1.detach().expand(B, H).clone(), v2=self.vleak2.detach().expand(B, H).clone(),
                    s1=self.vleak1.new_zeros(B, H), s2=self.vleak1.new_zeros(B, H),
                    y=self.out_bias.detach().expand(B, -1).clone())

    @torch.no_grad()
    def step(self, tok, st):
        """One token, one timestep, as the simulator runs the graph: (logits, state)."""
        a1, a2, ar = torch.sigmoid(self.p1), torch.sigmoid(self.p2), torch.sigmoid(self.pr)
        i1 = self.vleak1 + self.embed(tok) + self.rec1(st["s1"])
        v1 = i1 + (st["v1"] - i1) * a1
        s1 = (v1 > 1.0).to(v1.dtype)
        v1 = v1 - s1
        i2 = self.vleak2 + self.ff(s1) + self.rec2(st["s2"])
        v2 = i2 + (st["v2"] - i2) * a2
        s2 = (v2 > 1.0).to(v2.dtype)
        v2 = v2 - s2
        iy = self.out_bias + self.r_out * F.linear(s2, self.embed.weight)
        y = iy + (st["y"] - iy) * ar
        return y, dict(v1=v1, v2=v2, s1=s1, s2=s2, y=y)

    def counts(self):
        H, V = self.cfg["hidden"], self.cfg["vocab"]
        return dict(spiking_neurons=2 * H, li_neurons=V, synapses=2 * V * H + 3 * H * H)


class GRUBaseline(nn.Module):
    """Non-spiking baseline: tied embedding, a stacked GRU, tied readout."""

    kind = "gru"

    def __init__(self, vocab, d=128, layers=3, **_):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        nn.init.normal_(self.embed.weight, std=1.0 / math.sqrt(d))
        self.gru = nn.GRU(d, d, num_layers=layers, batch_first=True)
        self.head_bias = nn.Parameter(torch.zeros(vocab))
        self.cfg = dict(vocab=vocab, d=d, layers=layers)

    def forward(self, idx):
        y, _ = self.gru(self.embed(idx))
        return F.linear(y, self.embed.weight, self.head_bias), []

    def counts(self):
        return dict(spiking_neurons=0, li_neurons=0, synapses=0)


ARCHS = {"lima": Lima, "rlif": RLIF, "gru": GRUBaseline}

# Configs by size. lite: about 0.4M parameters with the 1k tokenizer.
CONFIGS = {
    ("lima", "lite"): dict(d=128, k=128, h=256, layers=3, lif=0, shift=0, shift2=0, rec=0, adapt=0, hold=0, tern=0),
    ("rlif", "lite"): dict(hidden=240),
    ("gru", "lite"): dict(d=128, layers=3),
    # standard: about 1.8M parameters with the 1k tokenizer.
    ("lima", "standard"): dict(d=256, k=256, h=768, layers=3, lif=0, shift=0, shift2=0, rec=0, adapt=0, hold=0, tern=0),
    ("gru", "standard"): dict(d=256, layers=4),
    # heavy: about 5.5M parameters with the 1k tokenizer.
    # lite and standard were first trained before fanin existed; their second
    # generation sets it with train.py --fanin (recorded in results.json's cfg).
    ("lima", "heavy"): dict(d=384, k=384, h=1280, layers=4, fanin=True, lif=0, shift=0, shift2=0, rec=0, adapt=0, hold=0, tern=0),
    ("gru", "heavy"): dict(d=456, layers=4),
}


def build(arch, size, vocab, **override):
    """The model of arch at size; override replaces config entries (fanin=True, say)."""
    return ARCHS[arch](vocab, **{**CONFIGS[(arch, size)], **override})


def build_run(res):
    """The model a run's results.json describes: its size's configuration with
    the run's own entries (widths set with train.py --set, fanin) over it."""
    cfg = res["cfg"]
    return build(res["arch"], res["size"], cfg["vocab"], **{k: v for k, v in cfg.items() if k != "vocab"})


@torch.no_grad()
def forward_steps(model, idx):
    """model(idx)'s logits computed one token at a time with model.step."""
    B, T = idx.shape
    st = model.init_state(B)
    out = []
    for t in range(T):
        y, st = model.step(idx[:, t], st)
        out.append(y)
    return torch.stack(out, 1)


@torch.no_grad()
def greedy(model, prompt, n):
    """Feed prompt (list of ids) then n argmax tokens, one step per token."""
    st = model.init_state(1)
    dev = model.embed.weight.device
    y = None
    for t in prompt:
        y, st = model.step(torch.tensor([t], device=dev), st)
    out = []
    for _ in range(n):
        t = int(y[0].argmax())
        out.append(t)
        y, st = model.step(torch.tensor([t], device=dev), st)
    return out


def n_params(m):
    """The trained parameters (lima's fixed head_scale is not one)."""
    return sum(p.numel() for p in m.parameters() if p.requires_grad)
