"""End-to-end peer for `vlc compress` (issue 17): what a PyTorch user writes to quantize a .npy with
k-means — load the file, k-means++ init (D² sampling) on the GPU, Lloyd iterations in TF32 until the
energy changes by less than 1e-4 relative (or --max-iters), assignments back to the host — timed
as wall clock, like `/usr/bin/time vlc compress`. Runs on the GPU machine (python3 with torch).
Prints one JSON line: seconds per phase, iterations, final energy (mean squared distance to the
nearest centroid, found with fp32 GEMMs — not TF32 — for the final assignment).
Usage: python3 bench/e2e_torch_peer.py data.npy --m 2048 [--tf32 | --fp32] [--seed 1234]
"""
import argparse, json, time
t_start = time.perf_counter()
import numpy as np
import torch

ap = argparse.ArgumentParser()
ap.add_argument("npy"); ap.add_argument("--m", type=int, required=True)
ap.add_argument("--fp32", action="store_true", help="exact fp32 GEMMs instead of TF32")
ap.add_argument("--max-iters", type=int, default=300); ap.add_argument("--tol", type=float, default=1e-4)
ap.add_argument("--seed", type=int, default=1234)
a = ap.parse_args()
torch.backends.cuda.matmul.allow_tf32 = not a.fp32
CH = 1 << 18

t0 = time.perf_counter()
x = torch.from_numpy(np.load(a.npy).astype(np.float32)).cuda()
torch.cuda.synchronize(); t_load = time.perf_counter() - t0
n, d = x.shape
xx = (x * x).sum(1)


def nearest(c):
    cc = (c * c).sum(1); ds, ix = [], []
    for s in range(0, n, CH):
        dd = xx[s:s + CH, None] - 2.0 * (x[s:s + CH] @ c.T) + cc[None, :]
        v, i = dd.min(1); ds.append(v); ix.append(i)
    return torch.cat(ds).clamp_min_(0), torch.cat(ix)


t0 = time.perf_counter()
g = torch.Generator(device="cuda").manual_seed(a.seed)
c = torch.empty((a.m, d), device="cuda")
c[0] = x[torch.randint(0, n, (1,), device="cuda", generator=g)]
D = ((x - c[0]) ** 2).sum(1)
for k in range(1, a.m):  # k-means++: each new centre drawn with probability ∝ D²
    i = torch.multinomial(D, 1, generator=g)
    c[k] = x[i]
    D = torch.minimum(D, ((x - c[k]) ** 2).sum(1))
torch.cuda.synchronize(); t_init = time.perf_counter() - t0

t0 = time.perf_counter()
prev = None
for it in range(1, a.max_iters + 1):
    dmin, imin = nearest(c)
    e = float(dmin.mean())
    sums = torch.zeros_like(c).index_add_(0, imin, x)
    cnt = torch.bincount(imin, minlength=a.m).clamp_min_(1).float()[:, None]
    c = torch.where(cnt > 0, sums / cnt, c)
    if prev is not None and abs(prev - e) <= a.tol * e:
        break
    prev = e
torch.cuda.synchronize(); t_loop = time.perf_counter() - t0
# The final assignment with fp32 GEMMs (TF32 off), to the host.
t0 = time.perf_counter()
torch.backends.cuda.matmul.allow_tf32 = False
dmin, imin = nearest(c)
ids = imin.cpu().numpy()
energy = float(dmin.double().mean())
t_final = time.perf_counter() - t0
print(json.dumps({"peer": "torch-kmeans++-lloyd", "tf32": not a.fp32, "n": n, "d": d, "m": a.m, "iterations": it,
                  "load_s": round(t_load, 3), "init_s": round(t_init, 3), "loop_s": round(t_loop, 3), "final_s": round(t_final, 3),
                  "wall_s": round(time.perf_counter() - t_start, 3), "energy": energy,
                  "device": torch.cuda.get_device_name(0)}), flush=True)
