"""Make a run of the average of another run's weights (train.py --ema).

    /usr/bin/python3 models/train/average.py --run RUN --decay 0.998

Reads runs/RUN/model-ema-DECAY.pt, evaluates it on the whole held-out split
here (on the CPU, as train.py's own evaluation on a CPU run), and writes
runs/RUN-avgDECAY/ as a run of its own: model.pt saved by this PyTorch, so
that the Go importer and export.py read it as any other, and a results.json
that is RUN's with the average's held-out figures and an "averaged" entry
(the run, the decay, and the last weights' bits per byte).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arch  # noqa: E402
import train  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--run", required=True)
    p.add_argument("--decay", type=float, required=True)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    src = os.path.join(HERE, "runs", args.run)
    weights = os.path.join(src, "model-ema-%g.pt" % args.decay)
    if not os.path.exists(weights):
        sys.exit("average.py: %s does not exist: train the run with --ema %g" % (weights, args.decay))
    with open(os.path.join(src, "results.json")) as f:
        res = json.load(f)
    model = arch.build_run(res)
    model.load_state_dict(torch.load(weights, map_location="cpu"))
    data = argparse.Namespace(data=os.path.join(HERE, "data"), tok=res["tokenizer"])
    index, _, val = train.load(data)
    ev = train.evaluate(model, val, index, res["args"]["eval_seq"], 64, "cpu")

    name = "%s-avg%g" % (args.run, args.decay)
    out = os.path.join(HERE, "runs", name)
    os.makedirs(out, exist_ok=True)
    torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, os.path.join(out, "model.pt"))
    res["averaged"] = dict(run=args.run, decay=args.decay, last_bpb=res["heldout"]["bpb"])
    res["run"] = name
    res["heldout"] = ev
    res.pop("ema", None)
    if ev.get("spike_rate_per_layer"):
        res["spike_rate_overall"] = float(np.mean(ev["spike_rate_per_layer"]))
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(dict(run=name, bpb=ev["bpb"], last_bpb=res["averaged"]["last_bpb"],
                          per_source={k: round(v["bpb"], 4) for k, v in ev["sources"].items()})))


if __name__ == "__main__":
    main()
