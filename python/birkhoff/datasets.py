"""Generated graphs and loaders for the benchmarks.

Alignment: the featured correlated Gaussian Wigner model and its Erdős–Rényi variant of
[huang2026qpalign] (the authors' sim_gaussian.py / sim_er.py), with our own portable PRNG:
the same seed gives the same instance on every platform. Coarsening: attributed graphs with
power-law degrees and community structure (:func:`community_graph`), at the size of
ogbn-products on request (:func:`products_like`), drawn with numpy's PCG64.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import numpy as np

from . import _birkhoff
from ._arrays import as_float, as_int

__all__ = [
    "PlantedInstance",
    "correlated_wigner",
    "correlated_erdos_renyi",
    "exact_margin",
    "partial_margin",
    "douban",
    "community_graph",
    "products_like",
    "correlated_power_law",
]

#: ogbn-products' size (OGB): nodes, undirected edges, feature dimension and classes.
PRODUCTS_NODES, PRODUCTS_EDGES, PRODUCTS_FEATURES, PRODUCTS_CLASSES = 2_449_029, 61_859_140, 100, 47


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


def _finite(value, name: str) -> float:
    v = as_float(value, name)
    if not np.isfinite(v):
        raise ValueError(f"{name}: must be finite, got {v}")
    return v


def community_graph(
    n: int,
    avg_degree: float = 10,
    d: int = 128,
    communities: int = 10,
    homophily: float = 0.8,
    noise: float = 2.0,
    edges: int | None = None,
    seed: int = 0,
) -> dict:
    """An attributed graph with power-law degrees and planted communities.

    Node i belongs to community ``i % communities``. Each of the E = ``edges`` (default
    ``round(n * avg_degree / 2)``) edges draws both endpoints with density proportional to
    i^(-1/2) over the node index, so the expected degree of node i falls as i^(-1/2) and the
    degree distribution has a power-law tail P(deg > k) ~ k^(-2); with probability
    ``homophily`` the second endpoint is moved into the first one's community. Features are
    the community's mean (standard normal, one per community) plus ``noise`` times standard
    normal noise. A few self-loops and repeated pairs occur, as in real edge lists; coarsen
    drops and merges them. Memory: about 40 bytes per edge while drawing.

    Returns:
        dict with x ((n, d) float32), edge_index ((2, E) int64, one orientation per pair)
        and labels ((n,) int64, the communities).

    Raises:
        TypeError: n, d, communities or edges not an integer; a real argument not a number.
        ValueError: n < 1, communities outside [1, n], homophily outside [0, 1], avg_degree
            or edges < 0, a real argument not finite.
    """
    n, d = as_int(n, "n", 1, 2**40), as_int(d, "d", 1, 2**20)
    communities = as_int(communities, "communities", 1, n)
    homophily, noise = _finite(homophily, "homophily"), _finite(noise, "noise")
    if not 0 <= homophily <= 1:
        raise ValueError(f"homophily: must lie in [0, 1], got {homophily}")
    if edges is None:
        degree = _finite(avg_degree, "avg_degree")
        if degree < 0:
            raise ValueError(f"avg_degree: must be >= 0, got {degree}")
        e = int(round(n * degree / 2))
    else:
        e = as_int(edges, "edges", 0, 2**40)
    rng = np.random.default_rng(seed)
    means = rng.standard_normal((communities, d)).astype(np.float32)
    labels = np.arange(n, dtype=np.int64) % communities
    x = means[labels]
    x += np.float32(noise) * rng.standard_normal((n, d), dtype=np.float32)
    a = np.minimum((n * rng.random(e) ** 2).astype(np.int64), n - 1)
    b = np.minimum((n * rng.random(e) ** 2).astype(np.int64), n - 1)
    same = rng.random(e) < homophily
    b = np.where(same, b - b % communities + a % communities, b)
    b = np.where(b >= n, b - communities, b)
    return dict(x=np.ascontiguousarray(x), edge_index=np.vstack([a, b]), labels=labels)


def products_like(seed: int = 0, scale: float = 1.0) -> dict:
    """A :func:`community_graph` of ogbn-products' shape.

    2,449,029 nodes, 61,859,140 edges (average degree 50.5), 100 features and 47 communities
    [hu2020ogb]; ``scale`` shrinks nodes and edges together (scale 0.01: 24,490 nodes, the same
    average degree) for tests and quick runs.

    About 2.6 GB while drawing at full size; the result holds 1.0 GB of features and 1.0 GB of
    edges.
    """
    scale = _finite(scale, "scale")
    if not 0 < scale <= 1:
        raise ValueError(f"scale: must lie in (0, 1], got {scale}")
    n = max(PRODUCTS_CLASSES, int(round(PRODUCTS_NODES * scale)))
    return community_graph(
        n,
        d=PRODUCTS_FEATURES,
        communities=PRODUCTS_CLASSES,
        edges=int(round(PRODUCTS_EDGES * scale)),
        seed=seed,
    )


def correlated_power_law(
    n: int,
    d: int = 16,
    avg_degree: float = 10,
    s: float = 0.8,
    r: float = 0.6,
    seed: int = 0,
) -> dict:
    """Two correlated sparse graphs with power-law degrees and features, and their alignment.

    A parent graph draws E = round(n * avg_degree / (2 s)) edges with both endpoints of density
    proportional to i^(-1/2) over the node index (as :func:`community_graph`: degree tail
    P(deg > k) ~ k^(-2)), self-loops and repeats dropped. Each child keeps each parent edge
    independently with probability ``s`` (the edge-sampling model of correlated graphs), so
    a child's average degree is about ``avg_degree``. Features: X (n, d) standard normal for
    G1 and r X + sqrt(1 - r^2) W for G2 (the correlation ``r`` of [huang2026qpalign]); G2's
    nodes are then relabelled by a uniform permutation: node i of G1 is node perm[i] of G2.
    Drawn with numpy's PCG64 from ``seed``.

    Returns:
        dict with edge_index1, edge_index2 ((2, E_k) int64, one orientation per edge), x1, x2
        ((n, d) float32), perm ((n,) int64) and truth ((n, 2) int64, rows [i, perm[i]]).

    Raises:
        TypeError: n, d or seed not an integer; a real argument not a number.
        ValueError: n < 2, d < 1, avg_degree < 0, s outside (0, 1], r outside [0, 1], or a
            real argument not finite.
    """
    n, d = as_int(n, "n", 2, 2**40), as_int(d, "d", 1, 2**20)
    degree, s, r = _finite(avg_degree, "avg_degree"), _finite(s, "s"), _finite(r, "r")
    if degree < 0:
        raise ValueError(f"avg_degree: must be >= 0, got {degree}")
    if not 0 < s <= 1:
        raise ValueError(f"s: must lie in (0, 1], got {s}")
    if not 0 <= r <= 1:
        raise ValueError(f"r: must lie in [0, 1], got {r}")
    rng = np.random.default_rng(as_int(seed, "seed", 0, 2**63 - 1))
    e = int(round(n * degree / (2 * s)))
    u = np.minimum((n * rng.random(e) ** 2).astype(np.int64), n - 1)
    v = np.minimum((n * rng.random(e) ** 2).astype(np.int64), n - 1)
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    keys = np.unique(lo[lo != hi] * n + hi[lo != hi])
    parent = np.vstack([keys // n, keys % n])
    perm = rng.permutation(n).astype(np.int64)
    keep1 = rng.random(parent.shape[1]) < s
    keep2 = rng.random(parent.shape[1]) < s
    x1 = rng.standard_normal((n, d), dtype=np.float32)
    w = rng.standard_normal((n, d), dtype=np.float32)
    x2 = np.empty_like(x1)
    x2[perm] = np.float32(r) * x1 + np.float32(np.sqrt(1 - r * r)) * w
    return dict(
        edge_index1=np.ascontiguousarray(parent[:, keep1]),
        edge_index2=np.ascontiguousarray(perm[parent[:, keep2]]),
        x1=x1,
        x2=x2,
        perm=perm,
        truth=np.stack([np.arange(n, dtype=np.int64), perm], axis=1),
    )
