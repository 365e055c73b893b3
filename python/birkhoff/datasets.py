"""Planted alignment instances and loaders for the alignment benchmarks.

The generators are the featured correlated Gaussian Wigner model and its Erdős–Rényi variant
of [huang2026qpalign] (the authors' sim_gaussian.py / sim_er.py), with our own
portable PRNG: the same seed gives the same instance on every platform.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import numpy as np

from . import _birkhoff

__all__ = [
    "PlantedInstance",
    "correlated_wigner",
    "correlated_erdos_renyi",
    "exact_margin",
    "partial_margin",
    "douban",
]


@dataclass
class PlantedInstance:
    """Two graphs with a hidden alignment: node i of G1 <-> node perm[i] of G2.

    Attributes:
        a, b (ndarray (n, n) float64): symmetric adjacency of G1 and G2, zero diagonal.
        x1, x2 (ndarray (n, d) float32): node features.
        perm (ndarray (n,) int64): the hidden bijection; B[perm[i], perm[j]] ~ A[i, j].
    """

    a: np.ndarray
    b: np.ndarray
    x1: np.ndarray
    x2: np.ndarray
    perm: np.ndarray

    @property
    def truth(self) -> np.ndarray:
        """(n, 2) int64 pairs [i, perm[i]], the ``truth`` argument of birkhoff.align."""
        return np.stack([np.arange(self.perm.shape[0]), self.perm], axis=1)


def correlated_wigner(
    n: int, d: int, rho: float, r: float, seed: int = 0, standardize: bool = True
) -> PlantedInstance:
    """Featured correlated Gaussian Wigner instance ([huang2026qpalign]).

    A_ij ~ N(0, 1) (i < j, symmetric); B°_ij = rho A_ij + sqrt(1 - rho^2) Z_ij;
    X ~ N(0, 1); Y° = r X + sqrt(1 - r^2) W; optionally column-standardised; then permuted.

    Raises:
        ValueError: n < 1, d < 0, rho or r outside [0, 1].
    """
    return PlantedInstance(
        **_birkhoff.align_planted("wigner", n, d, rho, r, 0.5, seed, standardize)
    )


def correlated_erdos_renyi(
    n: int, d: int, rho: float, r: float, p: float = 0.5, seed: int = 0, standardize: bool = True
) -> PlantedInstance:
    """Correlated Erdős–Rényi edges (marginal p, correlation rho) with Gaussian features."""
    return PlantedInstance(**_birkhoff.align_planted("er", n, d, rho, r, p, seed, standardize))


def exact_margin(n: int, d: int, rho: float, r: float) -> float:
    """Conjectured exact-recovery margin n rho^2 + d log(1/(1-r^2)) - 4 log n (our derivation)."""
    return _birkhoff.align_exact_margin(n, d, rho, r)


def partial_margin(n: int, d: int, rho: float, r: float) -> float:
    """Conjectured almost-exact recovery margin n rho^2 + 2 d log(1/(1-r^2)) - 4 log n (ours)."""
    return _birkhoff.align_partial_margin(n, d, rho, r)


def douban(root, restricted: bool = True) -> dict:
    """The Douban offline/online pair from a folder laid out as the project's data/douban.

    G1 is the offline graph (1118 nodes), G2 the online graph (3906 nodes, or its subgraph
    induced by the 1118 anchored nodes in original order when ``restricted``, as the QPAlign
    authors do). Returns a dict with edge_index1, edge_index2 ((2, E) int64), x1, x2 (float32,
    C order), truth ((1118, 2) [offline, online]) and seeds (the 223 prior pairs, same layout).
    """
    root = pathlib.Path(root)
    load = lambda name: np.ascontiguousarray(np.load(root / f"{name}.npy"))  # noqa: E731
    gt = load("ground_truth")  # [online, offline]
    online, offline = load("online_edge_index"), load("offline_edge_index")
    x_on, x_off = load("online_features"), load("offline_features")
    prior = load("prior_pairs")  # [offline, online]
    if restricted:
        keep = np.sort(gt[:, 0])
        new = -np.ones(x_on.shape[0], dtype=np.int64)
        new[keep] = np.arange(keep.shape[0])
        mask = (new[online[0]] >= 0) & (new[online[1]] >= 0)
        online = np.stack([new[online[0, mask]], new[online[1, mask]]])
        x_on = np.ascontiguousarray(x_on[keep])
        gt = np.stack([new[gt[:, 0]], gt[:, 1]], axis=1)
        prior = np.stack([prior[:, 0], new[prior[:, 1]]], axis=1)
    truth = np.ascontiguousarray(gt[:, ::-1], dtype=np.int64)
    return dict(
        edge_index1=np.ascontiguousarray(offline, dtype=np.int64),
        edge_index2=np.ascontiguousarray(online, dtype=np.int64),
        x1=np.ascontiguousarray(x_off, dtype=np.float32),
        x2=np.ascontiguousarray(x_on, dtype=np.float32),
        truth=truth,
        seeds=np.ascontiguousarray(prior, dtype=np.int64),
    )
