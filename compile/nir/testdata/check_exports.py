"""Check that files written by compile/nir load with the Python nir package.

    go test ./compile/nir -run TestWriteFixtures -args -write /tmp/nir-exports
    PYTHONPATH=/tmp/nir /usr/bin/python3 compile/nir/testdata/check_exports.py /tmp/nir-exports

For every exported file it runs nir.read (type checks on, except where the
graph holds pooling nodes, whose shapes nir cannot infer) and compares the
nodes, edges and every array with the fixture of the same name written by
nir itself (testdata/<name>.nir): same values, bit for bit, after nested
graphs are flattened the way the Go reader flattens them.
"""

import os
import sys

import numpy as np
import nir


def flat(g, prefix=""):
    nodes, edges, ins, outs = {}, [], {}, {}
    for name, n in g.nodes.items():
        q = prefix + name
        if isinstance(n, nir.NIRGraph):
            sn, se = flat(n, q + ".")
            nodes.update(sn)
            edges.extend(se)
            ins[name] = [prefix + name + "." + k for k, m in n.nodes.items() if isinstance(m, nir.Input)]
            outs[name] = [prefix + name + "." + k for k, m in n.nodes.items() if isinstance(m, nir.Output)]
        else:
            nodes[q] = n
            ins[name] = outs[name] = [q]
    for a, b in g.edges:
        edges += [(s, t) for s in outs[a] for t in ins[b]]
    return nodes, edges


def resolve(nodes, edges):
    for q in [q for q, n in nodes.items() if "." in q and isinstance(n, (nir.Input, nir.Output))]:
        preds = [a for a, b in edges if b == q]
        succs = [b for a, b in edges if a == q]
        edges = [(a, b) for a, b in edges if q not in (a, b)] + [(p, s) for p in preds for s in succs]
        del nodes[q]
    return nodes, sorted(set(edges))


SKIP = {"type", "input_type", "output_type", "metadata"}


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        # The reference may be float32 where we write float64 parameters:
        # compare the values, which float64 holds exactly.
        return a.shape == b.shape and np.array_equal(a.astype(np.float64), b.astype(np.float64))
    return np.array_equal(a, b)


def main(directory):
    here = os.path.dirname(os.path.abspath(__file__))
    failures = 0
    for fn in sorted(os.listdir(directory)):
        if not fn.endswith(".nir"):
            continue
        name = fn[:-4]
        check = name not in ("sumpool2d", "avgpool2d", "convnet")
        try:
            got = nir.read(os.path.join(directory, fn), type_check=check)
            ref = nir.read(os.path.join(here, fn), type_check=check)
            gn, ge = resolve(*flat(got))
            rn, re_ = resolve(*flat(ref))
            problems = []
            if set(gn) != set(rn):
                problems.append(f"nodes {sorted(gn)} != {sorted(rn)}")
            if sorted(set(ge)) != re_:
                problems.append(f"edges {sorted(set(ge))} != {re_}")
            for q in set(gn) & set(rn):
                a, b = gn[q], rn[q]
                if type(a) is not type(b):
                    problems.append(f"{q}: {type(a).__name__} != {type(b).__name__}")
                    continue
                for k, v in b.__dict__.items():
                    if k in SKIP or v is None:
                        continue
                    w = a.__dict__.get(k)
                    if isinstance(v, str) or isinstance(w, str):
                        # NIR's "same"/"valid" padding comes back as numbers.
                        continue
                    if not same(w, v):
                        problems.append(f"{q}.{k}: {w!r} != {v!r}")
            status = "ok" if not problems else "MISMATCH " + "; ".join(problems)
            failures += bool(problems)
        except Exception as e:  # report every file, then fail
            status = f"ERROR {type(e).__name__}: {e}"
            failures += 1
        print(f"{name:12s} nir.read(type_check={check}): {status}")
    print("all exports load and match" if failures == 0 else f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/nir-exports"))
