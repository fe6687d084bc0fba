"""How far pq's error is from the Gaussian bound --quality predicts it by (src/codec-registry/pq.ts
gaussianBoundMse): for each M, the per-subspace reverse water-filling bound at 8 bits of the
residuals divided by their anchor's RMS, times the mean squared scale, against pq's measured MSE.

Usage: python3 bench/pq-bound.py X.npy ANCHOR.npy M1,M2,... [measured1,measured2,...]
ANCHOR.npy: each row's anchor (`vlc decompress` of a `--residual none` file of X). The measured
MSEs come from a pq run over the same anchors (bench/results/rate-distortion-fmnist.md).
"""
import json, sys
import numpy as np

x = np.load(sys.argv[1]).astype(np.float64)
a = np.load(sys.argv[2]).astype(np.float64)
Ms = [int(v) for v in sys.argv[3].split(",")]
measured = [float(v) for v in sys.argv[4].split(",")] if len(sys.argv) > 4 else []
measured += [None] * (len(Ms) - len(measured))
r = x - a
n, d = r.shape
_, lab = np.unique(a, axis=0, return_inverse=True)
lab = lab.ravel()
m = lab.max() + 1
sq = np.bincount(lab, weights=(r * r).sum(1), minlength=m)
cnt = np.bincount(lab, minlength=m)
scale = np.sqrt(np.where(cnt > 0, sq / np.maximum(cnt, 1) / d, 0))
ms2 = (cnt * scale**2).sum() / n
rs = r / np.where(scale[lab] > 0, scale[lab], 1)[:, None]


def water_fill(lam, bits):
    lam = np.maximum(lam, 0)
    top = lam.max()
    if top <= 0:
        return 0.0
    lo, hi = np.log(top) - 2 * bits * np.log(2), np.log(top)
    for _ in range(100):
        mid = (lo + hi) / 2
        th = np.exp(mid)
        if (0.5 * np.log2(lam[lam > th] / th)).sum() > bits:
            lo = mid
        else:
            hi = mid
    return float(np.minimum(np.exp(hi), lam).sum())


rows = []
for M, meas in zip(Ms, measured):
    base, extra = d // M, d % M
    b = [0]
    for t in range(M):
        b.append(b[-1] + base + (1 if t < extra else 0))
    bound = ms2 * sum(water_fill(np.linalg.eigvalsh(np.atleast_2d(np.cov(rs[:, b[t]:b[t + 1]].T, bias=True))), 8) for t in range(M))
    rows.append({"M": M, "bound_mse": bound, "measured_mse": meas, "measured_over_bound": (meas / bound) if meas else None})
print(json.dumps({"n": n, "d": d, "m": int(m), "anchor_mse": float((r * r).sum(1).mean()), "rows": rows}, indent=1))
