"""How much recall@10 any residual code of B bytes can give on the 100,000 x 128 mixture (issue 11).

The mixture (bench/datasets.py gm, n = 100,000, 1,000 components) is each point's component centre
plus isotropic Gaussian noise, projected onto the unit sphere. Its residual after the component
means — what vlc's anchors leave (vlc's anchor MSE on it is 0.0816) — is therefore close to an
isotropic Gaussian, and Shannon's rate-distortion function of a Gaussian bounds the MSE that ANY
code of R bits per vector can reach (reverse water-filling over the residual's covariance
eigenvalues; for an isotropic one, D(R) = P * 2^(-2R/d), P the residual energy).

This script prints:
  - the within-component residual's energy and covariance spectrum (how far from isotropic it is:
    a rotation, learned or random, helps PQ only where the spectrum is uneven);
  - the Gaussian bound on MSE for the given code bytes per vector;
  - the recall@10 (the queries and truth of bench/rate-distortion.py) of the originals plus
    i.i.d. Gaussian error of a given MSE (the "additive" channel), and of the "backward" channel
    that an MSE-optimal quantizer at the bound realises (decoding = shrunk residual + noise).
These are what a code of that rate could at best give if its errors behaved like those channels.

Usage: /usr/bin/python3 bench/rate-distortion-bound.py [--bytes 28,30,32] [--mse 0.0176,0.0109,0.0072]
Needs: numpy, python3-faiss (the exact searches).
"""
import argparse, os, sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np
import faiss

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from datasets import gm  # noqa: E402

QUERIES = 500  # as bench/rate-distortion.py


def water_filling(eigenvalues, bits):
    """Gaussian distortion (sum over dimensions) at `bits` bits per vector by reverse water-filling."""
    lo, hi = 0.0, float(eigenvalues.max())
    for _ in range(200):
        level = (lo + hi) / 2
        rate = sum(0.5 * np.log2(e / level) for e in eigenvalues if e > level)
        lo, hi = (level, hi) if rate > bits else (lo, level)
    return float(np.minimum(eigenvalues, level).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", default="28,30,32", help="code bytes per vector for the bound")
    ap.add_argument("--mse", default="0.0176,0.0109,0.0078,0.0072", help="error MSEs to simulate")
    a = ap.parse_args()
    n, k = 100000, 1000
    x = gm(n=n, k=k)
    d = x.shape[1]
    # The component labels as gm() draws them (same seed, same order of draws).
    rng = np.random.default_rng(42)
    rng.normal(size=(k, d))
    labels = rng.integers(0, k, n)
    means = np.zeros((k, d))
    for j in range(k):
        means[j] = x[labels == j].mean(0)
    residual = x - means[labels]
    energy = float((residual ** 2).sum(1).mean())
    eigenvalues = np.sort(np.linalg.eigvalsh(residual.T @ residual / n))[::-1]
    print(f"within-component residual energy {energy:.4g}; covariance eigenvalues {eigenvalues[-1]:.3g}..{eigenvalues[0]:.3g} "
          f"(mean {eigenvalues.mean():.3g})")
    for b in (int(v) for v in a.bytes.split(",")):
        print(f"{b} code bytes per vector: Gaussian bound on MSE {water_filling(eigenvalues, 8 * b):.4g} "
              f"(isotropic formula {energy * 2 ** (-2 * 8 * b / d):.4g})")

    queries = np.random.default_rng(1).choice(n, QUERIES, replace=False)
    flat = faiss.IndexFlatL2(d)
    flat.add(x)
    _, exact = flat.search(x[queries], 11)
    truth = [[j for j in exact[r] if j != q][:10] for r, q in enumerate(queries)]

    def recall(decoded):
        index = faiss.IndexFlatL2(d)
        index.add(np.ascontiguousarray(decoded, dtype=np.float32))
        _, found = index.search(x[queries], 11)
        return np.mean([len(set([j for j in found[r] if j != q][:10]) & set(truth[r])) / 10 for r, q in enumerate(queries)])

    noise = np.random.default_rng(0)
    for mse in (float(v) for v in a.mse.split(",")):
        additive = x + noise.normal(size=x.shape).astype(np.float32) * np.sqrt(mse / d)
        shrink = 1 - mse / energy
        backward = means[labels] + shrink * residual + noise.normal(size=x.shape) * np.sqrt(shrink * mse / d)
        print(f"error MSE {mse:.4g}: recall@10 with i.i.d. Gaussian error {recall(additive):.3f}; "
              f"with the backward (optimal-quantizer) channel {recall(backward):.3f}")


if __name__ == "__main__":
    main()
