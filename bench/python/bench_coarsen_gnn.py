"""GNNs trained on NOPE / NOPE* coarse graphs and tested on the original nodes (the paper's
protocol), against the same GNNs on the full graph and the linear SGC stand-in.

The protocol of the NOPE authors' ``gnn_model.py`` (design note coarsen.md §6.3): a two-layer
GNN (GCN, GraphSAGE or GIN; hidden 128, output 64) runs on the coarse graph; each original node
reads its super-node's embedding (the lift, ``assignment``) and concatenates it with an MLP of
its own feature (D -> 128 -> 64); a classifier 128 -> 64 -> C follows. Full-batch Adam (lr 0.01,
weight decay 5e-4) on the original training nodes, early stopping on the validation loss
(patience 50, at most --max-epochs), the best checkpoint tested on the original test nodes.
The full-graph baseline is the same GNN type on the original graph with a linear classifier
(§6.5, no MLP branch; AdamW, weight decay 5e-2). The stand-in is eval_coarsen_quality.py's SGC
(numpy): two propagation hops and a linear classifier.

Cora and CiteSeer from the project's shared data (PubMed's folder has no features). Prints
accuracy, weighted F1 and training seconds per run with the machine load, writes
bench/results/coarsen_gnn.json and, with --figure, the accuracy-vs-ratio figure.

    python3 bench/python/bench_coarsen_gnn.py [--datasets cora citeseer]
        [--ratios 0.1 0.3 0.5 0.7 0.9] [--models gcn sage gin] [--seeds 3] [--figure PATH]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import time

import numpy as np
import torch
from _results import Results
from torch import nn
from torch_geometric.data import Data
from torch_geometric.nn import GCNConv, GINConv, SAGEConv
from torch_geometric.utils import to_undirected

import birkhoff

SHARED = pathlib.Path(os.environ.get("BIRKHOFF_SHARED_DATA", "../shared/data"))


def load(name):
    folder = SHARED / name
    arr = lambda f: torch.from_numpy(np.load(folder / f"{f}.npy"))  # noqa: E731
    return Data(
        x=arr("features").float(),
        edge_index=to_undirected(arr("edge_index")),
        y=arr("labels"),
        train_mask=arr("train_mask"),
        val_mask=arr("val_mask"),
        test_mask=arr("test_mask"),
    )


def conv(kind, d_in, d_out):
    if kind == "gcn":
        return GCNConv(d_in, d_out)
    if kind == "sage":
        return SAGEConv(d_in, d_out)
    mlp = nn.Sequential(
        nn.Linear(d_in, d_out), nn.BatchNorm1d(d_out), nn.ReLU(), nn.Linear(d_out, d_out)
    )
    return GINConv(mlp, train_eps=True)


class Gnn(nn.Module):
    """Two graph layers (hidden, out) with ReLU and dropout 0.5 between them."""

    def __init__(self, kind, d_in, hidden=128, out=64):
        super().__init__()
        self.kind, self.l1, self.l2 = kind, conv(kind, d_in, hidden), conv(kind, hidden, out)

    def forward(self, x, edge_index, edge_weight=None):
        w = (edge_weight,) if self.kind == "gcn" and edge_weight is not None else ()
        h = nn.functional.dropout(self.l1(x, edge_index, *w).relu(), 0.5, self.training)
        return self.l2(h, edge_index, *w)


def _xavier(module):
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)


class CoarseModel(nn.Module):
    """§6.3: GNN on the coarse graph, lifted, beside an MLP of the node's own feature."""

    def __init__(self, kind, d_in, classes):
        super().__init__()
        self.gnn = Gnn(kind, d_in)
        self.mlp = nn.Sequential(
            nn.Linear(d_in, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 64)
        )
        self.head = nn.Sequential(
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(128, 64),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(64, classes),
        )
        _xavier(self.mlp)
        _xavier(self.head)

    def forward(self, full, coarse, assignment):
        h = self.gnn(coarse.x, coarse.edge_index, coarse.get("edge_weight"))
        return self.head(torch.cat([h[assignment], self.mlp(full.x)], dim=1))


class FullModel(nn.Module):
    """§6.5: the same GNN on the original graph and a linear classifier."""

    def __init__(self, kind, d_in, classes):
        super().__init__()
        self.gnn, self.head = Gnn(kind, d_in), nn.Linear(64, classes)

    def forward(self, full, coarse=None, assignment=None):
        return self.head(self.gnn(full.x, full.edge_index).relu())


def fit(model, full, coarse, assignment, optimiser, max_epochs, patience=50):
    """Early stopping on the validation loss; returns (test accuracy, weighted F1, seconds)."""
    from sklearn.metrics import f1_score

    best, best_state, waited = float("inf"), None, 0
    t = time.perf_counter()
    for _ in range(max_epochs):
        model.train()
        optimiser.zero_grad()
        logits = model(full, coarse, assignment)
        nn.functional.cross_entropy(logits[full.train_mask], full.y[full.train_mask]).backward()
        optimiser.step()
        model.eval()
        with torch.no_grad():
            logits = model(full, coarse, assignment)
            val = nn.functional.cross_entropy(logits[full.val_mask], full.y[full.val_mask]).item()
        if val < best:
            best, waited = val, 0
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        else:
            waited += 1
            if waited >= patience:
                break
    seconds = time.perf_counter() - t
    model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        pred = model(full, coarse, assignment).argmax(1)[full.test_mask].numpy()
    truth = full.y[full.test_mask].numpy()
    return float((pred == truth).mean()), float(f1_score(truth, pred, average="weighted")), seconds


def run(args, results, name, full, kind, method, ratio, coarse, assignment, coarsen_s):
    """Trains one model type over the seeds on `coarse` (None: the full graph), records and
    prints the mean."""
    d, classes = full.num_features, int(full.y.max()) + 1
    runs = []
    for seed in range(args.seeds):
        torch.manual_seed(seed)
        if coarse is None:  # §6.5: the full-graph baseline and its optimiser
            model = FullModel(kind, d, classes)
            opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=5e-2)
        else:
            model = CoarseModel(kind, d, classes)
            opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        runs.append(fit(model, full, coarse, assignment, opt, args.max_epochs))
    acc, f1, secs = np.array(runs).T
    nodes = full.num_nodes if coarse is None else coarse.num_nodes
    results.add(
        dataset=name,
        model=kind,
        method=method,
        ratio=ratio,
        nodes=nodes,
        accuracy=acc.mean(),
        accuracy_std=acc.std(),
        f1_weighted=f1.mean(),
        train_s=secs.mean(),
        coarsen_s=coarsen_s,
    )
    graph = "full graph" if coarse is None else method
    print(
        f"{name:<9} {kind:<5} {graph:<14} {ratio:>5} {nodes:>6} {acc.mean():>6.3f} "
        f"{acc.std():>5.3f} {f1.mean():>6.3f} {secs.mean():>8.2f} {coarsen_s:>9.2f} "
        f"{os.getloadavg()[0]:>5.2f}",
        flush=True,
    )


def stand_in(name, ratios, results):
    """eval_coarsen_quality.py's linear SGC on the same coarse graphs (model "sgc")."""
    import warnings

    import eval_coarsen_quality

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = eval_coarsen_quality.rows_for(name, ratios)
    for r in rows:
        if r["method"] in ("NOPE", "NOPE*", "No-Comp"):
            method = {"NOPE": "nope", "NOPE*": "nope_star", "No-Comp": "full"}[r["method"]]
            results.add(
                dataset=name,
                model="sgc",
                method=method,
                ratio=float(r["ratio"]),
                nodes=r["K"],
                accuracy=r["acc"],
                accuracy_std=0.0,
                f1_weighted=r["f1"],
                train_s=None,
                coarsen_s=None,
            )
            print(
                f"{name:<9} {'sgc':<5} {method:<14} {r['ratio']:>5} {r['K']:>6} "
                f"{r['acc']:>6.3f} {'':>5} {r['f1']:>6.3f}"
            )


def main():
    p = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    p.add_argument("--datasets", nargs="+", default=["cora", "citeseer"])
    p.add_argument("--ratios", type=float, nargs="+", default=[0.1, 0.3, 0.5, 0.7, 0.9])
    p.add_argument("--methods", nargs="+", default=["nope_star", "nope"])
    p.add_argument("--models", nargs="+", default=["gcn", "sage", "gin"])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--max-epochs", type=int, default=2000)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--figure", help="write the accuracy-vs-ratio figure here (PNG)")
    p.add_argument("--results", help="JSON output (default bench/results/coarsen_gnn.json)")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    results = Results(
        "coarsen_gnn",
        "GNNs on coarse graphs, tested on the original nodes",
        x="ratio",
        times={"train": "train_s"},
        group=["dataset", "model", "method"],
        versions={"torch": torch.__version__},
    )
    print(
        f"{'dataset':<9} {'model':<5} {'graph':<14} {'ratio':>5} {'nodes':>6} {'acc':>6} "
        f"{'std':>5} {'F1w':>6} {'train s':>8} {'coarsen s':>9} {'load':>5}"
    )
    for name in args.datasets:
        full = load(name)
        for kind in args.models:
            run(args, results, name, full, kind, "full", 1.0, None, None, 0.0)
        for method in args.methods:
            for ratio in args.ratios:
                t = time.perf_counter()
                res = birkhoff.coarsen(full, ratio=ratio, method=method)
                coarsen_s = time.perf_counter() - t
                assignment = torch.from_numpy(res.assignment)
                for kind in args.models:
                    run(
                        args,
                        results,
                        name,
                        full,
                        kind,
                        method,
                        ratio,
                        res.data,
                        assignment,
                        coarsen_s,
                    )
        stand_in(name, args.ratios, results)
    results.save(args.results)
    if args.figure:
        figure(results.data, args.figure)


def figure(data, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = data["rows"]
    datasets = sorted({r["dataset"] for r in rows})
    models = sorted({r["model"] for r in rows})
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.5 * len(datasets), 4), squeeze=False)
    for ax, name in zip(axes[0], datasets):
        for i, kind in enumerate(models):
            colour = f"C{i}"
            for method, style in (("nope_star", "o-"), ("nope", "s--")):
                pts = sorted(
                    (r["ratio"], r["accuracy"], r["accuracy_std"])
                    for r in rows
                    if r["dataset"] == name and r["model"] == kind and r["method"] == method
                )
                if pts:
                    x, y, e = zip(*pts)
                    ax.errorbar(
                        x,
                        y,
                        yerr=e,
                        fmt=style,
                        color=colour,
                        capsize=2,
                        label=f"{kind.upper()} on {method.replace('_star', '*')}",
                    )
            base = [
                r["accuracy"]
                for r in rows
                if r["dataset"] == name and r["model"] == kind and r["method"] == "full"
            ]
            if base:
                ax.axhline(
                    base[0], color=colour, ls=":", lw=1, label=f"{kind.upper()} on the full graph"
                )
        ax.set_title(name)
        ax.set_xlabel("coarsening ratio (fraction of nodes kept)")
        ax.set_ylabel("test accuracy on the original nodes")
        ax.legend(fontsize=6, ncol=2)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
