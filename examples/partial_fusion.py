"""Partial fusion of two MLPs: from their ensemble (t = 0) to one OT-fused network (t = 1)
=======================================================================================

Two scikit-learn MLPs of the same shape (64-128-64-10 on ``load_digits``) trained from
different seeds are fused layer by layer, as in OT model fusion [singh2020]: at each hidden
layer the cost between neuron i of A and neuron j of B is the squared distance between their
incoming weights (and bias), written in the coordinates of the fused previous layer; partial
OT (``birkhoff.partial_sinkhorn``, uniform weights, transported mass fraction t) decides which
neurons are fused. The plan's k = round(t h) heaviest one-to-one pairs are merged (their
weights averaged), the unmatched neurons of both models are kept side by side, so the fused
layer has 2h - k neurons. Every fused neuron reads A's part of the previous layer for A's
neurons and B's part for B's; the output layer averages the two models' logits. Hence t = 0 is
exactly the ensemble (averaged logits) and t = 1 is full OT fusion (width h, no fine-tuning).

Prints and plots test accuracy against parameter count for t in {0, 0.1, ..., 1} over several
seed pairs (mean and spread), with the single models, their ensemble and naive weight
averaging (no alignment) as references. Writes docs/figures/partial_fusion.png and
docs/figures/partial_fusion.csv.

Run it with::

    python examples/partial_fusion.py [--pairs 5] [--hidden 128 64] [--blur 0.05]
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np

import birkhoff


def train_mlp(x, y, hidden, seed, max_iter=300):
    """An sklearn MLPClassifier (ReLU, Adam) trained from seed; returns its (W, b) layers."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    model = MLPClassifier(hidden_layer_sizes=tuple(hidden), max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x, y)
    return [(w.copy(), b.copy()) for w, b in zip(model.coefs_, model.intercepts_)]


def forward(layers, x):
    """Logits of an MLP given as [(W (in, out), b (out,)), ...], ReLU between layers."""
    h = x
    for k, (w, b) in enumerate(layers):
        h = h @ w + b
        if k < len(layers) - 1:
            h = np.maximum(h, 0)
    return h


def param_count(layers):
    """Parameters that are not structurally zero: an A-only neuron reads no B-only neuron and
    vice versa, so those blocks of a fused layer are zeros that cost nothing."""
    return sum(int(np.count_nonzero(w)) + b.size for w, b in layers)


def match(cost_a, cost_b, t, blur, rng=None):
    """The k = round(t h) one-to-one pairs (i of A, j of B) that partial OT moves most mass on.

    cost_a (h, d), cost_b (h, d): the neurons' incoming weights in shared coordinates. The
    partial plan of mass t (uniform weights 1/h) is rounded greedily: pairs in decreasing plan
    order, each neuron used at most once.
    """
    h = cost_a.shape[0]
    k = int(round(t * h))
    if k == 0:
        return []
    # blur relative to the typical neuron distance, so one setting fits every layer.
    scale = np.sqrt(np.median(np.sum((cost_a[:, None, :] - cost_b[None, :, :]) ** 2, -1)))
    r = birkhoff.partial_sinkhorn(
        cost_a, cost_b, mass_fraction=min(1.0, k / h), blur=blur * scale, warn=False
    )
    plan = r.plan()
    order = np.argsort(-plan, axis=None)
    used_a, used_b, pairs = set(), set(), []
    for flat in order:
        i, j = divmod(int(flat), h)
        if i in used_a or j in used_b:
            continue
        pairs.append((i, j))
        used_a.add(i)
        used_b.add(j)
        if len(pairs) == k:
            break
    return pairs


def fuse(layers_a, layers_b, t, blur=0.05):
    """Partial fusion of two MLPs of the same shape; returns the fused [(W, b), ...].

    A fused neuron is a triple (i, j): i the neuron of A it stands for (or -1), j that of B
    (or -1). Hidden layer l of width h becomes k pairs, h - k A-only and h - k B-only neurons
    (k = round(t h)); the input features and the output classes are shared pairs.
    """
    d_in = layers_a[0][0].shape[0]
    prev = [(k, k) for k in range(d_in)]  # input features: shared
    fused = []
    for layer, ((wa, ba), (wb, bb)) in enumerate(zip(layers_a, layers_b)):
        h = wa.shape[1]
        last = layer == len(layers_a) - 1
        ia = np.array([i for i, _ in prev])
        ib = np.array([j for _, j in prev])
        has_a, has_b = ia >= 0, ib >= 0
        # Incoming weights of every neuron of A and B over the fused previous layer (zero where
        # the fused neuron does not carry that model), bias as a last coordinate.
        in_a = np.zeros((h, len(prev) + 1))
        in_b = np.zeros((h, len(prev) + 1))
        in_a[:, :-1][:, has_a] = wa[ia[has_a], :].T
        in_b[:, :-1][:, has_b] = wb[ib[has_b], :].T
        in_a[:, -1], in_b[:, -1] = ba, bb
        if last:
            units = [(c, c) for c in range(h)]  # classes: shared
        else:
            pairs = match(in_a, in_b, t, blur)
            pa = {i for i, _ in pairs}
            pb = {j for _, j in pairs}
            units = (
                pairs
                + [(i, -1) for i in range(h) if i not in pa]
                + [(-1, j) for j in range(h) if j not in pb]
            )
        w = np.zeros((len(prev), len(units)))
        b = np.zeros(len(units))
        for u, (i, j) in enumerate(units):
            if i >= 0 and j >= 0:
                w[:, u] = 0.5 * (in_a[i, :-1] + in_b[j, :-1])
                b[u] = 0.5 * (ba[i] + bb[j])
            elif i >= 0:
                w[:, u] = in_a[i, :-1]
                b[u] = ba[i]
            else:
                w[:, u] = in_b[j, :-1]
                b[u] = bb[j]
        fused.append((w, b))
        prev = units
    return fused


def naive_average(layers_a, layers_b):
    """Weights averaged position by position, no alignment."""
    return [(0.5 * (wa + wb), 0.5 * (ba + bb)) for (wa, ba), (wb, bb) in zip(layers_a, layers_b)]


def accuracy(layers, x, y):
    return float(np.mean(np.argmax(forward(layers, x), 1) == y))


def experiment(pairs, hidden, blur, ts):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = x / 16.0
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
    rows = []
    for p in range(pairs):
        a = train_mlp(xtr, ytr, hidden, seed=2 * p)
        b = train_mlp(xtr, ytr, hidden, seed=2 * p + 1)
        ens = 0.5 * (forward(a, xte) + forward(b, xte))
        rows.append(("model A", p, param_count(a), accuracy(a, xte, yte)))
        rows.append(("model B", p, param_count(b), accuracy(b, xte, yte)))
        ens_acc = float(np.mean(np.argmax(ens, 1) == yte))
        rows.append(("ensemble", p, param_count(a) + param_count(b), ens_acc))
        avg = naive_average(a, b)
        rows.append(("naive average", p, param_count(avg), accuracy(avg, xte, yte)))
        for t in ts:
            f = fuse(a, b, t, blur)
            rows.append((f"t={t:.1f}", p, param_count(f), accuracy(f, xte, yte)))
        print(
            f"pair {p}: A {rows[-len(ts) - 4][3]:.3f} B {rows[-len(ts) - 3][3]:.3f} "
            f"ensemble {ens_acc:.3f} t=1 {rows[-1][3]:.3f}",
            flush=True,
        )
    return rows


def summarise(rows):
    names = list(dict.fromkeys(r[0] for r in rows))
    table = []
    for name in names:
        acc = np.array([r[3] for r in rows if r[0] == name])
        params = np.array([r[2] for r in rows if r[0] == name])
        table.append((name, params.mean(), acc.mean(), acc.std(), acc.min(), acc.max()))
    return table


def plot(table, out, title):
    """Accuracy (mean, std bars) against parameter count: the t curve and the references."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6), dpi=110)
    curve = [r for r in table if r[0].startswith("t=")]
    ax.errorbar(
        [r[1] for r in curve],
        [r[2] for r in curve],
        yerr=[r[3] for r in curve],
        marker="o",
        ms=3,
        capsize=2,
        label="partial fusion, t = 0 ... 1",
    )
    for r in curve[:: len(curve) - 1]:
        ax.annotate(r[0], (r[1], r[2]), textcoords="offset points", xytext=(4, -10), fontsize=7)
    marks = {"model A": "s", "model B": "D", "ensemble": "*", "naive average": "x"}
    for r in table:
        if r[0] in marks:
            ax.errorbar(
                [r[1]], [r[2]], yerr=[r[3]], marker=marks[r[0]], ls="", capsize=2, label=r[0]
            )
    ax.set_xlabel("parameters (not structurally zero)")
    ax.set_ylabel("test accuracy (load_digits)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out + ".png")


def main():
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("--pairs", type=int, default=5, help="seed pairs")
    ap.add_argument("--hidden", type=int, nargs="+", default=[128, 64])
    ap.add_argument("--blur", type=float, default=0.05, help="relative to the neuron distance")
    ap.add_argument(
        "--output",
        default="docs/figures/partial_fusion.png",
        help="the figure; the table is written beside it as .csv",
    )
    ap.add_argument("--plot-only", action="store_true", help="redraw the figure from the .csv")
    args = ap.parse_args()
    args.out = os.path.splitext(args.output)[0]
    title = (
        f"Partial fusion of two MLPs 64-{'-'.join(map(str, args.hidden))}-10, "
        f"{args.pairs} seed pairs"
    )
    if args.plot_only:
        with open(args.out + ".csv") as fh:
            next(fh)
            table = [(r[0], *map(float, r[1:])) for r in (line.strip().split(",") for line in fh)]
        plot(table, args.out, title)
        return
    ts = [round(0.1 * k, 1) for k in range(11)]
    rows = experiment(args.pairs, args.hidden, args.blur, ts)
    table = summarise(rows)
    print(f"\n{'network':<14} {'params':>8} {'accuracy':>9} {'std':>6} {'min':>6} {'max':>6}")
    for name, params, mean, std, lo, hi in table:
        print(f"{name:<14} {params:>8.0f} {mean:>9.4f} {std:>6.4f} {lo:>6.3f} {hi:>6.3f}")
    with open(args.out + ".csv", "w") as fh:
        fh.write("network,params,accuracy_mean,accuracy_std,accuracy_min,accuracy_max\n")
        for name, params, mean, std, lo, hi in table:
            fh.write(f"{name},{params:.0f},{mean:.4f},{std:.4f},{lo:.4f},{hi:.4f}\n")
    plot(table, args.out, title)
    print(f"wrote {args.out}.png and {args.out}.csv")


if __name__ == "__main__":
    main()
