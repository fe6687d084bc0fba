"""The benchmark datasets of bench/quality.py and bench/cpu_speed.mjs, generated deterministically.

  seed-large: the test-cuda data (docs/cuda.md, The parity test), n=10000, d=128: point i dim j = centre[i % 3] +
              sin((i*d + j) * 0.1) * 0.5 in f32 (centres 0, 5, 10), stored as f16.
  gm:         20000 x 128, a mixture of 300 Gaussian components (centres N(0, 1), noise sd 0.3,
              component of each point uniform), each point projected onto the unit sphere; f32.
  digits:     scikit-learn's bundled load_digits (1797 x 64, pixel values 0..16), f32.
  gauss:      50000 x 128 standard normal values, f32: no structure at all (the hardest case for
              a quantizer, and the one issue 15 met: the old default kept almost nothing of it).
  clustered:  50000 x 128, like `vlc bench`'s prod workload: 512 centres N(0, 1), each point a
              centre plus N(0, 0.35^2) noise, f32.
  clustered384: the same at d = 384 (issue 30's 50,000 x 384 --quality timings), seed 1.

Usage: python3 bench/datasets.py NAME OUT.npy
"""
import sys
import numpy as np


def seed_large(n=10000, d=128):
    i = np.arange(n, dtype=np.int64)[:, None]
    j = np.arange(d, dtype=np.int64)[None, :]
    centres = np.array([0, 5, 10], dtype=np.float32)
    x = centres[(i % 3).ravel()][:, None] + np.sin((i * d + j).astype(np.float32) * np.float32(0.1)) * np.float32(0.5)
    return x.astype(np.float32).astype(np.float16)


def gm(n=20000, d=128, k=300, noise=0.3, seed=42):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(k, d))
    lab = rng.integers(0, k, n)
    x = c[lab] + noise * rng.normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


def gauss(n=50000, d=128, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


def clustered(n=50000, d=128, k=512, spread=0.35, seed=1):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(k, d))
    return (c[rng.integers(0, k, n)] + spread * rng.normal(size=(n, d))).astype(np.float32)


def digits():
    from sklearn.datasets import load_digits
    return load_digits().data.astype(np.float32)


DATASETS = {"seed-large": (seed_large, 256), "gm": (gm, 256), "digits": (digits, 64), "gauss": (gauss, 512), "clustered": (clustered, 512), "clustered384": (lambda: clustered(d=384), 512)}

if __name__ == "__main__":
    name, out = sys.argv[1], sys.argv[2]
    np.save(out, DATASETS[name][0]())
