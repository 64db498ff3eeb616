"""Print a markdown table of held-out bits per byte from runs/*/results.json.

    /usr/bin/python3 models/train/table.py lite-lima lite-rlif lite-gru
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHORT = {"casino_negotiation_dialogues": "casino", "self_dialogue_corpus_subset": "self_dialogue",
         "taskmaster4_coffee_ordering": "taskmaster4"}


def main(runs):
    res = [json.load(open(os.path.join(HERE, "runs", r, "results.json"))) for r in runs]
    srcs = sorted(res[0]["heldout"]["sources"])
    print("| run | params | steps | train tokens | train s | " + " | ".join(SHORT.get(s, s) for s in srcs) + " | **overall** | spike rate per layer |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(srcs) + "---:|---|")
    for r in res:
        h = r["heldout"]
        rates = h.get("spike_rate_per_layer")
        rate = ", ".join(f"{x:.3f}" for x in rates) if rates else "–"
        print(f"| {r['run']} | {r['params']:,} | {r['steps']:,} | {r['train_tokens']/1e6:.1f}M | {r['train_seconds']:.0f} | "
              + " | ".join(f"{h['sources'][s]['bpb']:.3f}" for s in srcs) + f" | **{h['bpb']:.3f}** | {rate} |")


if __name__ == "__main__":
    main(sys.argv[1:])
