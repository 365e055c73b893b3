"""Training a GCN on a coarsened graph and testing it on the original nodes
=========================================================================

NOPE's claim is that a GNN trained on the coarse graph predicts the original nodes about as
well as one trained on the full graph [bai2026nope]. Cora is coarsened with NOPE* at several
ratios (``birkhoff.coarsen`` on a ``torch_geometric.data.Data``: mean features, edge weights
counting the merged edges). As in the authors' protocol, a two-layer GCN runs on the coarse
graph, ``res.lift`` hands each original node its super-node's embedding (differentiable), an
MLP of the node's own feature runs beside it, and a linear layer classifies the pair; the loss
is over the original training nodes and the test is on the original test nodes. Next to it:
the same GCN trained on the full graph, and the MLP alone (no edges). Prints accuracy and
training time per ratio and plots accuracy against the ratio. Needs ``torch_geometric``
(``pip install .[pyg]``) and the project's shared data (Cora).

Run it with::

    python examples/coarsen_gnn.py [--ratios 0.1 0.3 0.5 0.7] [--epochs 200] [--data DIR]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch_geometric.data import Data  # noqa: E402
from torch_geometric.nn import GCNConv  # noqa: E402
from torch_geometric.utils import to_undirected  # noqa: E402

import birkhoff  # noqa: E402

# The project's shared data, beside the checkout as in the README's commands.
DATA = pathlib.Path(os.environ.get("BIRKHOFF_SHARED_DATA", "../shared/data"))


def load_cora(folder):
    load = lambda name: torch.from_numpy(np.load(folder / f"{name}.npy"))  # noqa: E731
    return Data(
        x=load("features"),
        edge_index=to_undirected(load("edge_index")),
        y=load("labels"),
        train_mask=load("train_mask"),
        test_mask=load("test_mask"),
    )


class Model(torch.nn.Module):
    """GCN on `graph` (lifted through `lift` when coarse), beside an MLP of the own feature."""

    def __init__(self, d_in, classes, hidden=64, use_graph=True, branch=True):
        super().__init__()
        self.use_graph, self.branch = use_graph, branch
        self.l1, self.l2 = GCNConv(d_in, hidden), GCNConv(hidden, hidden)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.ReLU())
        self.head = torch.nn.Linear(hidden * (int(use_graph) + int(branch)), classes)

    def forward(self, full, graph=None, lift=None):
        drop = lambda h: torch.nn.functional.dropout(h, 0.5, self.training)  # noqa: E731
        parts = []
        if self.use_graph:
            g = graph if graph is not None else full
            w = g.edge_weight if "edge_weight" in g else None
            h = self.l2(drop(self.l1(drop(g.x), g.edge_index, w).relu()), g.edge_index, w)
            parts.append(lift(h) if lift is not None else h)
        if self.branch:
            parts.append(self.mlp(drop(full.x)))
        return self.head(drop(torch.cat(parts, 1).relu()))


def fit(model, full, graph, lift, epochs):
    """Trains on the original training nodes; returns (test accuracy, seconds)."""
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    t = time.perf_counter()
    for _ in range(epochs):
        model.train()
        opt.zero_grad()
        out = model(full, graph, lift)
        torch.nn.functional.cross_entropy(out[full.train_mask], full.y[full.train_mask]).backward()
        opt.step()
    seconds = time.perf_counter() - t
    model.eval()
    with torch.no_grad():
        pred = model(full, graph, lift).argmax(1)
    return (pred[full.test_mask] == full.y[full.test_mask]).float().mean().item(), seconds


def main():
    p = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    p.add_argument("--ratios", type=float, nargs="+", default=[0.1, 0.3, 0.5, 0.7])
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--data", type=pathlib.Path, default=DATA / "cora")
    p.add_argument("--output", default="out/coarsen_gnn.png")
    args = p.parse_args()
    full = load_cora(args.data)
    d, classes = full.num_features, int(full.y.max()) + 1

    def accuracy(graph=None, lift=None, **kind):
        accs, secs = [], []
        for seed in range(args.seeds):
            torch.manual_seed(seed)
            acc, sec = fit(Model(d, classes, **kind), full, graph, lift, args.epochs)
            accs.append(acc)
            secs.append(sec)
        return float(np.mean(accs)), float(np.std(accs)), float(np.mean(secs))

    gcn_full = accuracy(branch=False)
    mlp = accuracy(use_graph=False)
    print(f"{'graph':<16} {'nodes':>6} {'accuracy':>9} {'std':>6} {'train s':>8}")
    spread = (lambda s: f"{s:>6.3f}") if args.seeds > 1 else (lambda s: f"{'-':>6}")
    for name, r in (("full (GCN)", gcn_full), ("none (MLP)", mlp)):
        print(f"{name:<16} {full.num_nodes:>6} {r[0]:>9.3f} {spread(r[1])} {r[2]:>8.2f}")
    rows = []
    for ratio in args.ratios:
        t = time.perf_counter()
        res = birkhoff.coarsen(full, ratio=ratio, method="nope_star")
        seconds = time.perf_counter() - t
        acc = accuracy(graph=res.data, lift=res.lift)
        rows.append((ratio, *acc))
        print(
            f"{f'NOPE* {ratio:g}':<16} {res.data.num_nodes:>6} {acc[0]:>9.3f} {spread(acc[1])} "
            f"{acc[2]:>8.2f}  (coarsened in {seconds:.2f} s)"
        )
    fig, ax = plt.subplots(figsize=(6, 4))
    r = np.array(rows)
    ax.errorbar(
        r[:, 0], r[:, 1], yerr=r[:, 2], marker="o", capsize=3, label="GCN on the NOPE* graph + MLP"
    )
    ax.axhline(gcn_full[0], color="k", ls="--", label="GCN on the full graph")
    ax.axhline(mlp[0], color="grey", ls=":", label="MLP alone (no edges)")
    ax.set_xlabel("coarsening ratio (fraction of nodes kept)")
    ax.set_ylabel("test accuracy on the original nodes")
    ax.set_title("Cora: train on the coarse graph, test on the original")
    ax.legend()
    fig.tight_layout()
    pathlib.Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.output, dpi=100)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
