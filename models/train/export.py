"""Export a trained candidate as the snn graph it stands for, plus a reference trace.

    /usr/bin/python3 models/train/export.py --run lite-lima

Writes into models/train/runs/<run>/:

  reference.pt  the equivalence fixture for the Go side: 512 held-out tokens,
                the logits of the step-by-step forward pass after each token
                (float64 model, stored as float32), and a prompt with its
                200-token greedy continuation.

and with --graph:

  graph.json    the node graph: every node with its snn kind and fields, each
                field a constant or the key of a tensor in neuro.pt, and the
                edges; Dt, Timesteps per token, the tokenizer and the task.
  neuro.pt      a state_dict of graph-ready float32 tensors named
                <node>.<field>: weights in snn's (out, in) layout, time
                constants in seconds (tau = -Dt / ln a).

compile/pytorch imports a lima model.pt directly (models/lima registers the
same mapping as lima_graph below); equivalence_test.go checks that the imported
graph reproduces reference.pt.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def f32(t):
    return t.detach().cpu().float().contiguous()


def spk_node(b, p, T, name="spk"):
    """Block b's hidden neurons, named p.name: Threshold 0, or with lif LIF
    neurons (threshold 1, subtractive reset) whose time constants go into T."""
    h = b.fc1.out_features
    if b.spk_p is None:
        return dict(name=f"{p}.{name}", kind="Threshold", threshold=0.0, n=h)
    T[f"{p}.spk.tau"] = arch.tau_seconds(b.spk_p)
    return dict(name=f"{p}.{name}", kind="LIF", tau=f"{p}.spk.tau", r=1.0, v_leak=0.0, v_threshold=1.0,
                v_reset=0.0, reset="subtract", n=h)


def lima_graph(m):
    c = m.cfg
    V, d = c["vocab"], c["d"]
    T, nodes, edges = {}, [], []
    E = m.embed.weight
    T["embed.weight"] = f32(E.t())
    nodes += [dict(name="token", kind="Input", shape=[V]),
              dict(name="embed", kind="Linear", weight="embed.weight")]
    edges.append(["token", "embed"])
    prev = "embed"
    for i, b in enumerate(m.blocks):
        p = f"b{i}"
        k = b.mix_in.out_features
        T[f"{p}.mix_in.weight"] = f32(b.mix_in.weight)
        T[f"{p}.mix.tau"] = arch.tau_seconds(b.mix_p)
        T[f"{p}.mix_out.weight"] = f32(b.mix_out.weight)
        T[f"{p}.fc1.weight"] = f32(b.fc1.weight)
        T[f"{p}.fc1.bias"] = f32(b.fc1.bias)
        T[f"{p}.fc2.weight"] = f32(b.fc2.weight)
        nodes += [
            dict(name=f"{p}.mix_in", kind="Linear", weight=f"{p}.mix_in.weight"),
            dict(name=f"{p}.mix", kind="LI", tau=f"{p}.mix.tau", r=1.0, v_leak=0.0, n=k),
            dict(name=f"{p}.mix_out", kind="Linear", weight=f"{p}.mix_out.weight"),
            dict(name=f"{p}.sum", kind="Scale", scale=1.0, n=d),
            dict(name=f"{p}.fc1", kind="Affine", weight=f"{p}.fc1.weight", bias=f"{p}.fc1.bias"),
            spk_node(b, p, T),
            dict(name=f"{p}.fc2", kind="Linear", weight=f"{p}.fc2.weight"),
            dict(name=f"{p}.out", kind="Scale", scale=1.0, n=d),
        ]
        edges += [[prev, f"{p}.mix_in"], [f"{p}.mix_in", f"{p}.mix"], [f"{p}.mix", f"{p}.mix_out"],
                  [f"{p}.mix_out", f"{p}.sum"], [prev, f"{p}.sum"],
                  [f"{p}.sum", f"{p}.fc1"], [f"{p}.fc1", f"{p}.spk"], [f"{p}.spk", f"{p}.fc2"],
                  [f"{p}.fc2", f"{p}.out"], [f"{p}.sum", f"{p}.out"]]
        # shift channels: the residual current `steps` tokens back
        for name, lin_in, lin_out, steps in (("shift", b.shift_in, b.shift_out, 1),
                                             ("shift2", b.shift2_in, b.shift2_out, 2)):
            if lin_in is None:
                continue
            T[f"{p}.{name}_in.weight"] = f32(lin_in.weight)
            T[f"{p}.{name}_out.weight"] = f32(lin_out.weight)
            nodes += [dict(name=f"{p}.{name}_in", kind="Linear", weight=f"{p}.{name}_in.weight"),
                      dict(name=f"{p}.{name}", kind="Delay", delay=steps * arch.DT, n=lin_in.out_features),
                      dict(name=f"{p}.{name}_out", kind="Linear", weight=f"{p}.{name}_out.weight")]
            chain = [prev, f"{p}.{name}_in", f"{p}.{name}", f"{p}.{name}_out", f"{p}.sum"]
            edges += [list(e) for e in zip(chain, chain[1:])]
        # tern: a mirror of the hidden neurons on the negated current, its
        # spikes negated into fc2
        if b.tern is not None:
            h = b.fc1.out_features
            nodes += [dict(name=f"{p}.neg", kind="Scale", scale=-1.0, n=h),
                      spk_node(b, p, T, "spk_neg"),
                      dict(name=f"{p}.neg_out", kind="Scale", scale=-1.0, n=h)]
            chain = [f"{p}.fc1", f"{p}.neg", f"{p}.spk_neg", f"{p}.neg_out", f"{p}.fc2"]
            edges += [list(e) for e in zip(chain, chain[1:])]
        # adapt: each hidden neuron's spikes back into itself through a
        # leaky integrator (a cycle, delayed by a step on its edge into spk)
        if b.adapt_p is not None:
            T[f"{p}.adapt.tau"] = arch.tau_seconds(b.adapt_p)
            T[f"{p}.adapt_out.scale"] = f32(b.adapt_w)
            h = b.fc1.out_features
            nodes += [dict(name=f"{p}.adapt_in", kind="Scale", scale=1.0, n=h),
                      dict(name=f"{p}.adapt", kind="LI", tau=f"{p}.adapt.tau", r=1.0, v_leak=0.0, n=h),
                      dict(name=f"{p}.adapt_out", kind="Scale", scale=f"{p}.adapt_out.scale", n=h)]
            chain = [f"{p}.spk", f"{p}.adapt_in", f"{p}.adapt", f"{p}.adapt_out", f"{p}.spk"]
            edges += [list(e) for e in zip(chain, chain[1:])]
        # rec channels: the block's spikes of the previous token, through a
        # one-step Delay into out for the blocks after it, and through
        # fc1 . rec_out . rec_in back into its own neurons (a cycle, which
        # the simulator delays by a step on its edge back into spk)
        if b.rec_in is not None:
            T[f"{p}.rec_in.weight"] = f32(b.rec_in.weight)
            T[f"{p}.rec_out.weight"] = f32(b.rec_out.weight)
            W = b.fc1.weight.double() @ b.rec_out.weight.double() @ b.rec_in.weight.double()
            T[f"{p}.rec_loop.weight"] = f32(W)
            nodes += [dict(name=f"{p}.rec_in", kind="Linear", weight=f"{p}.rec_in.weight"),
                      dict(name=f"{p}.rec", kind="Delay", delay=arch.DT, n=b.rec_in.out_features),
                      dict(name=f"{p}.rec_out", kind="Linear", weight=f"{p}.rec_out.weight"),
                      dict(name=f"{p}.rec_loop", kind="Linear", weight=f"{p}.rec_loop.weight")]
            chain = [f"{p}.spk", f"{p}.rec_in", f"{p}.rec", f"{p}.rec_out", f"{p}.out"]
            edges += [list(e) for e in zip(chain, chain[1:])]
            edges += [[f"{p}.spk", f"{p}.rec_loop"], [f"{p}.rec_loop", f"{p}.spk"]]
        prev = f"{p}.out"
    T["head.weight"] = f32(E)
    T["head.bias"] = f32(m.head_bias)
    nodes += [dict(name="head", kind="Affine", weight="head.weight", bias="head.bias"),
              dict(name="logits", kind="Output")]
    edges += [[prev, "head"], ["head", "logits"]]
    return nodes, edges, T


def rlif_graph(m):
    V, H = m.cfg["vocab"], m.cfg["hidden"]
    T = {"embed.weight": f32(m.embed.weight.t()), "rec1.weight": f32(m.rec1.weight),
         "ff.weight": f32(m.ff.weight), "rec2.weight": f32(m.rec2.weight),
         "lif1.tau": arch.tau_seconds(m.p1), "lif1.v_leak": f32(m.vleak1),
         "lif2.tau": arch.tau_seconds(m.p2), "lif2.v_leak": f32(m.vleak2),
         "head.weight": f32(m.embed.weight), "readout.tau": arch.tau_seconds(m.pr).expand(V).contiguous(),
         "readout.r": f32(m.r_out).expand(V).contiguous(), "readout.v_leak": f32(m.out_bias)}
    lif = dict(kind="LIF", r=1.0, v_threshold=1.0, v_reset=0.0, reset="subtract", n=H)
    nodes = [dict(name="token", kind="Input", shape=[V]),
             dict(name="embed", kind="Linear", weight="embed.weight"),
             dict(name="lif1", tau="lif1.tau", v_leak="lif1.v_leak", **lif),
             dict(name="rec1", kind="Linear", weight="rec1.weight"),
             dict(name="ff", kind="Linear", weight="ff.weight"),
             dict(name="lif2", tau="lif2.tau", v_leak="lif2.v_leak", **lif),
             dict(name="rec2", kind="Linear", weight="rec2.weight"),
             dict(name="head", kind="Linear", weight="head.weight"),
             dict(name="readout", kind="LI", tau="readout.tau", r="readout.r", v_leak="readout.v_leak"),
             dict(name="logits", kind="Output")]
    edges = [["token", "embed"], ["embed", "lif1"], ["lif1", "rec1"], ["rec1", "lif1"],
             ["lif1", "ff"], ["ff", "lif2"], ["lif2", "rec2"], ["rec2", "lif2"],
             ["lif2", "head"], ["head", "readout"], ["readout", "logits"]]
    return nodes, edges, T


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--run", required=True)
    p.add_argument("--source", default="topical_chat", help="held-out source of the 512 reference tokens")
    p.add_argument("--graph", action="store_true",
                   help="also write graph.json and neuro.pt (compile/pytorch reads lima's model.pt itself; rlif needs these)")
    args = p.parse_args()
    torch.set_num_threads(2)
    rdir = os.path.join(HERE, "runs", args.run)
    with open(os.path.join(rdir, "results.json")) as f:
        res = json.load(f)
    m = arch.build_run(res)
    m.load_state_dict(torch.load(os.path.join(rdir, "model.pt")))
    m.eval()
    nodes, edges, T = {"lima": lima_graph, "rlif": rlif_graph}[res["arch"]](m)
    if args.graph:
        g = dict(name=f"neuro-1-{res['size']}", arch=res["arch"], task="causal-lm", dt=arch.DT, timesteps=1,
                 tokenizer="neuro-" + res["tokenizer"], input=dict(kind="one-hot", size=res["cfg"]["vocab"]),
                 output=dict(kind="logits", size=res["cfg"]["vocab"]), nodes=nodes, edges=edges)
        with open(os.path.join(rdir, "graph.json"), "w") as f:
            json.dump(g, f, indent=1)
        torch.save(T, os.path.join(rdir, "neuro.pt"))

    d = os.path.join(HERE, "data", res["tokenizer"])
    with open(os.path.join(d, "index.json")) as f:
        index = json.load(f)
    val = np.fromfile(os.path.join(d, index["sources"][args.source]["val"]["file"]), dtype="<u2").astype(np.int64)
    toks = torch.from_numpy(val[:512])[None]
    md = m.double()
    # smallest distance of any spiking pre-activation from its threshold over the
    # reference: below float32 rounding (~1e-6 relative), Go and PyTorch may
    # disagree on a spike
    margins = []
    hooks = []
    if res["arch"] == "lima":
        for b in md.blocks:
            hooks.append(b.fc1.register_forward_hook(lambda mod, i, o: margins.append(float(o.abs().min()))))
    logits = arch.forward_steps(md, toks)[0]
    for h in hooks:
        h.remove()
    with torch.no_grad():
        par = md(toks)[0][0]
    # a chat prompt: <|user|>\n ... <|end|>\n<|assistant|>\n, taken from the held-out text
    ids = val.tolist()
    u = ids.index(2)
    e = ids.index(4, u)
    prompt = ids[u : e + 2] + [3, ids[e + 1]]  # ... <|end|> \n <|assistant|> \n
    cont = arch.greedy(md, prompt, 200)
    torch.save(dict(tokens=toks[0].clone(), logits=logits.float().clone(), prompt=torch.tensor(prompt),
                    greedy=torch.tensor(cont)), os.path.join(rdir, "reference.pt"))
    print(json.dumps(dict(nodes=len(nodes), edges=len(edges), tensors=len(T),
                          step_vs_parallel_max_abs=float((logits - par).abs().max()),
                          min_spike_margin=min(margins) if margins else None,
                          prompt=prompt[:8], greedy=cont[:20])))


if __name__ == "__main__":
    main()
