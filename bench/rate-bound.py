"""How far issue 11's '<= 34 bytes: recall@10 of FAISS IVF1024,PQ32 + 0.10' target is from what any
quantizer can do on the gm100k mixture (bench/datasets.py gm(n=100000, k=1000): 1,000 Gaussian
components, noise 0.3, rows scaled to unit length).

1. The residual left by the mixture's own component means (an oracle anchor: no learned anchor does
   better on average) has energy E per vector; for a Gaussian source of that energy over d dims,
   Shannon's rate-distortion bound at B bytes is E * 2^(-2 * 8B / d) (no code of B bytes per
   vector, of any kind, has a lower mean squared error).
   The residual's covariance eigenvalues say how far from isotropic it is: a rotation before PQ
   (random, or learned as OPQ does) can only gain where they are uneven.
2. recall@10 of exact search over x + e, e isotropic Gaussian noise of a given MSE (the shape the
   quantization error of a good code approaches), over 500 queries drawn from the data, as
   bench/rate-distortion.py measures it (the query itself left out).
Usage: python3 bench/rate-bound.py  (numpy only; a few minutes on 2 cores)
"""
import json
import numpy as np

rng = np.random.default_rng(42)
n, d, k, noise = 100000, 128, 1000, 0.3
c = rng.normal(size=(k, d))
lab = rng.integers(0, k, n)
x = c[lab] + noise * rng.normal(size=(n, d))
x /= np.linalg.norm(x, axis=1, keepdims=True)
mu = np.zeros((k, d))
np.add.at(mu, lab, x)
mu /= np.maximum(np.bincount(lab, minlength=k), 1)[:, None]
energy = float(((x - mu[lab]) ** 2).sum(1).mean())
eig = np.linalg.eigvalsh((x - mu[lab]).T @ (x - mu[lab]) / n)
x = x.astype(np.float32)
bounds = {B: energy * 2 ** (-2 * 8 * B / d) for B in (28, 30, 32, 32.75)}

q = np.random.default_rng(5).choice(n, 500, replace=False)


def top(base, queries, kk=11):
    norms = (base ** 2).sum(1)
    return np.vstack([np.argsort(norms[None, :] - 2 * queries[s:s + 100] @ base.T, axis=1)[:, :kk] for s in range(0, len(queries), 100)])


truth = top(x, x[q])


def recall(xh):
    got = top(xh, x[q])
    hits = 0
    for i, qi in enumerate(q):
        t = [j for j in truth[i] if j != qi][:10]
        g = [j for j in got[i] if j != qi][:10]
        hits += len(set(t) & set(g))
    return hits / (10 * len(q))


curve = {}
for mse in (0.0176, 0.0109, 0.0072, 0.0065, 0.0051, 0.0036):
    xh = x + np.sqrt(mse / d) * np.random.default_rng(1).normal(size=x.shape).astype(np.float32)
    curve[mse] = recall(xh)
print(json.dumps({"oracle_residual_energy": energy,
                  "residual_covariance_eigenvalues": {"min": float(eig.min()), "max": float(eig.max()), "mean": float(eig.mean())},
                  "shannon_mse_bound_by_residual_bytes": bounds,
                  "recall_at_10_vs_isotropic_noise_mse": curve}, indent=1))
