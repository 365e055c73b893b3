"""One independent check of a transport answer, shared by the benchmarks: its plan's
marginals read off its own potentials in float64 numpy, whatever computed them."""

from __future__ import annotations

import numpy as np


def marginal_error(x, y, f, g, eps, cost_scale=0.5, samples=1000, seed=0):
    """Largest relative error of the plan's row and column sums over sampled points, uniform
    weights: P_ij = exp((f_i + g_j - cost_scale |x_i - y_j|^2) / eps) / (n m), each sampled row
    (column) summed over all m (n) pairs in float64. cost_scale 0.5 is GeomLoss's p = 2 cost."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    f, g = np.asarray(f, np.float64).ravel(), np.asarray(g, np.float64).ravel()
    rng = np.random.default_rng(seed)
    n, m = len(x), len(y)
    worst = 0.0
    for rows, cols, h, k, w in ((x, y, f, g, m), (y, x, g, f, n)):
        pick = rng.choice(len(rows), size=min(samples, len(rows)), replace=False)
        for chunk in np.array_split(pick, max(1, len(pick) // 50)):
            c = cost_scale * ((rows[chunk, None, :] - cols[None, :, :]) ** 2).sum(-1)
            z = (h[chunk, None] + k[None, :] - c) / eps
            mass = np.exp(z).sum(1) / w
            worst = max(worst, float(np.abs(mass - 1).max()))
    return worst
