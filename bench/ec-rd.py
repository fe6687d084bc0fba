"""Rate-distortion of the entropy-coded residual codec ('ec', issue 28) against vlc's fixed-rate
codecs, FAISS's scalar and product quantizers, and the Gaussian bound, on one or more data sets.

For each data set: 500 seeded queries drawn from the data; truth = each query's exact top-10 among
the originals (squared L2, the query left out). Every method encodes all n vectors, decodes them,
and is scored by
  - bytes/vector of the WHOLE file: vlc: the .vlc file's size / n (anchors, ids, models, headers);
    FAISS: the serialized index (faiss.serialize_index after add: codes, trained quantizer tables,
    header) / n — beside it its code bytes alone (sa_code_size);
  - MSE (mean squared L2 error per vector) and recall@10 among the decoded vectors.
vlc (bench/rate-distortion.mjs): anchors learned once per data set on the CPU (m below, --iters
caps the annealing: the same anchors for every codec), then none, int4, int8, bits at several
budgets and ec at several budgets (--residual ec --bytes B).
FAISS (python3-faiss): SQ4, SQ6, SQ8, PQ M (8-bit codes; FAISS needs M | d: Fashion-MNIST's 784 is
padded with zero columns, as bench/rate-distortion.py does).

The bound: the residual r = x - anchor left by vlc's anchors has covariance eigenvalues λ_i; a
Gaussian source with that spectrum needs at least R(D) = Σ ½ log2(λ_i / min(θ, λ_i)) bits a vector
at MSE D (reverse water-filling). Each ec point is compared with it at its own MSE: its residual
bits a vector (its file's bytes less the anchors-only file's, × 8) minus R(D), per dimension.

Targets: for recall@10 0.90, 0.95, 0.99, the smallest whole-file bytes/vector measured reaching it,
per family (vlc fixed-rate = none/int4/int8/bits; vlc ec; each FAISS key).

Interpolated: recall@10 rises with bytes; between two measured points of a family the bytes at a
target are interpolated linearly in log(1 - recall) (each family's points made monotone first), so
the comparison does not hinge on where the sweep's budgets happen to fall; both the smallest
measured file and the interpolated bytes are reported.

Usage: /usr/bin/python3 bench/ec-rd.py [--datasets gm100k,fashion] [--iters 40] [--faiss none|sq|all]
         [--ec-budgets 90,120] [--bits-budgets 200,300] [--pq-budgets 98] [--out bench/results/DATE-ec-rd]
Needs: npx tsc -p . (dist/), numpy, python3-faiss (Debian), dataset-fashion-mnist for fashion.
"""
import argparse, datetime, gzip, json, os, platform, subprocess, sys, tempfile, time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from datasets import gm  # noqa: E402

try:
    import faiss
except ImportError:
    faiss = None

FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def fashion():
    with gzip.open(FASHION) as f:
        a = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
    return a.reshape(-1, 784).astype(np.float32)


# name: (make, m, bits budgets, ec budgets, FAISS PQ sizes) — budgets in whole-file bytes a vector,
# spanning recall@10 0.9 .. 0.99 on each set.
SETS = {
    "gm100k": (lambda: gm(n=100000, k=1000), 1024, [40, 56, 76, 100], [24, 30, 38, 46, 56, 68, 84, 104], [32]),
    "smoke": (lambda: gm(n=4000, k=60), 64, [40, 76], [24, 46, 84], [16]),  # a minute: does it all run
    "fashion": (fashion, 256, [200, 300, 470, 600], [90, 120, 160, 220, 300, 400, 520], [98]),
}
QUERIES = 500
TARGETS = (0.90, 0.95, 0.99)


def recall_mse(x, xh, queries, truth):
    idx = faiss.IndexFlatL2(x.shape[1])
    idx.add(np.ascontiguousarray(xh, dtype=np.float32))
    _, found = idx.search(x[queries], 11)
    hits = sum(len(set([j for j in found[r] if j != q][:10]) & set(truth[r])) for r, q in enumerate(queries))
    return hits / (10 * len(queries)), float(((x - xh) ** 2).sum(1).mean())


def faiss_measure(x, queries, truth, key, M, pq_train_per_centroid=None, verbose=False):
    """One FAISS codec (index_factory key; M > 0: a PQ of M subspaces, d padded with zero columns up to
    a multiple of M): whole-file bytes a vector (serialize_index / n), its code bytes, recall@10, MSE.
    pq_train_per_centroid: the PQ's k-means sample, a centroid (FAISS's default 256; fewer trains faster).
    verbose: FAISS's own training log on stderr (OPQ's iterations, each PQ's k-means), to time a long run
    from its first iterations; the results are the same."""
    n, d = x.shape
    pad = -d % M if M else 0
    xp = np.ascontiguousarray(np.pad(x, ((0, 0), (0, pad)))) if pad else x
    t = time.time()
    index = faiss.index_factory(d + pad, key)
    inner = faiss.downcast_index(index.index) if isinstance(index, faiss.IndexPreTransform) else index
    if pq_train_per_centroid and hasattr(inner, "pq"):
        inner.pq.cp.max_points_per_centroid = pq_train_per_centroid
    if verbose:
        for i in range(index.chain.size() if isinstance(index, faiss.IndexPreTransform) else 0):
            faiss.downcast_VectorTransform(index.chain.at(i)).verbose = True
        index.verbose = inner.verbose = True
        if hasattr(inner, "pq"):
            inner.pq.verbose = True
    index.train(xp)
    index.add(xp)
    whole = len(faiss.serialize_index(index))
    xh = np.ascontiguousarray(index.sa_decode(index.sa_encode(xp))[:, :d])
    recall, mse = recall_mse(x, xh, queries, truth)
    return {"bytes_per_vector": whole / n, "code_bytes": index.sa_code_size(), "mse": mse, "recall_at_10": recall,
            "seconds": time.time() - t, "padded_d": d + pad}


def faiss_rows(x, queries, truth, pqs):
    rows = []
    for key, M in [("SQ4", 0), ("SQ6", 0), ("SQ8", 0)] + [(f"PQ{M}", M) for M in pqs or []]:
        # "np": no polysemous training, which only relabels the centroids (the decoded vectors are
        # the same) and took most of FAISS PQ's time here (over 30 minutes for gm100k's PQ32).
        got = faiss_measure(x, queries, truth, key + ("np" if M else ""), M)
        got.pop("padded_d")
        rows.append({"method": f"FAISS {key}", "family": f"FAISS {key[:2]}", **got})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def water_filling_bits(lam, D):
    lam = lam[lam > 0]
    if D >= lam.sum():
        return 0.0
    lo, hi = 0.0, float(lam.max())
    for _ in range(200):
        th = (lo + hi) / 2
        if np.minimum(th, lam).sum() > D:
            hi = th
        else:
            lo = th
    th = (lo + hi) / 2
    return float(0.5 * np.log2(lam[lam > th] / th).sum())


def interpolated(rows, fam, t):
    """Bytes a vector at recall t on the family's measured curve (log(1 - recall) linear in bytes), None outside it."""
    pts = sorted((r["bytes_per_vector"], r["recall_at_10"]) for r in rows if r["family"] == fam)
    env, best = [], -1.0
    for b, rc in pts:  # monotone: a larger file keeps the best recall seen so far
        best = max(best, rc)
        env.append((b, best))
    for (b0, r0), (b1, r1) in zip(env, env[1:]):
        if r0 < t <= r1:
            if r0 >= 1 or r1 >= 1 or r1 == r0:
                return b1
            l0, l1, lt = np.log(1 - r0), np.log(1 - r1), np.log(1 - t)
            return float(b0 + (b1 - b0) * (lt - l0) / (l1 - l0))
    if env and env[0][1] >= t:
        return env[0][0]
    return None


def family(method):
    if method.startswith("vlc ec"):
        return "vlc ec"
    return "vlc fixed-rate" if method.startswith("vlc") else method


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="gm100k,fashion")
    ap.add_argument("--iters", default="40", help="cap on the anchors' annealing iterations")
    ap.add_argument("--faiss", default="sq", choices=["none", "sq", "all"], help="FAISS peers: none, SQ4/6/8 only (fast), or with PQ too")
    ap.add_argument("--ec-budgets", default=None)
    ap.add_argument("--bits-budgets", default=None)
    ap.add_argument("--pq-budgets", default=None, help="vlc pq --bytes budgets (default: none)")
    ap.add_argument("--queries", type=int, default=QUERIES)
    day = datetime.date.today().isoformat()
    ap.add_argument("--out", default=os.path.join(HERE, "results", f"{day}-ec-rd"))
    a = ap.parse_args()
    root = os.path.dirname(HERE)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root).stdout.strip()
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "machine": "2-core CPU (shared, loaded)", "host": platform.node(),
               "cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count(), "commit": commit,
               "faiss": faiss.__version__ if faiss and a.faiss != "none" else None, "queries": a.queries,
               "command": " ".join(["bench/ec-rd.py"] + sys.argv[1:]), "iters": int(a.iters), "datasets": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.datasets.split(","):
            make, m, bits_b, ec_b, pqs = SETS[name]
            if a.ec_budgets:
                ec_b = [float(v) for v in a.ec_budgets.split(",")]
            if a.bits_budgets:
                bits_b = [float(v) for v in a.bits_budgets.split(",")]
            vlc_pq = a.pq_budgets.split(",") if a.pq_budgets else []
            x = np.ascontiguousarray(make(), dtype=np.float32)
            n, d = x.shape
            queries = np.random.default_rng(1).choice(n, a.queries, replace=False)
            npy, qfile, rfile = (os.path.join(tmp, f"{name}{e}") for e in (".npy", ".json", ".f32"))
            np.save(npy, x)
            with open(qfile, "w") as f:
                json.dump([int(q) for q in queries], f)
            print(f"{name}: {n} x {d}, m = {m}", file=sys.stderr, flush=True)
            started, load0 = time.time(), os.getloadavg()
            out = subprocess.run(["node", os.path.join(HERE, "rate-distortion.mjs"), npy, "--m", str(m), "--queries", qfile, "--budgets", ",".join(vlc_pq),
                                  "--bits-budgets", ",".join(map(str, bits_b)), "--ec-budgets", ",".join(map(str, ec_b)),
                                  "--iters", a.iters, "--residual-out", rfile], check=True, stdout=subprocess.PIPE, text=True, cwd=root)
            vlc = json.loads(out.stdout.strip().splitlines()[-1])
            rows = vlc.pop("rows")
            r = np.fromfile(rfile, dtype=np.float32).reshape(n, d).astype(np.float64)
            lam = np.clip(np.linalg.eigvalsh(r.T @ r / n), 0, None)
            var = (r ** 2).mean(0)
            none_bytes = next(row["bytes_per_vector"] for row in rows if row["method"] == "vlc none")
            for row in rows:
                row["family"] = family(row["method"])
                if row["family"] == "vlc ec":
                    bits = 8 * (row["bytes_per_vector"] - none_bytes)
                    row["residual_bits_per_dim"] = bits / d
                    row["bound_bits_per_dim"] = water_filling_bits(lam, row["mse"]) / d
                    row["bound_per_dimension_variances_bits_per_dim"] = water_filling_bits(var, row["mse"]) / d
                    row["gap_bits_per_dim"] = row["residual_bits_per_dim"] - row["bound_bits_per_dim"]
            if faiss and a.faiss != "none":
                flat = faiss.IndexFlatL2(d)
                flat.add(x)
                _, exact = flat.search(x[queries], 11)
                truth = [[j for j in exact[i] if j != q][:10] for i, q in enumerate(queries)]
                rows += faiss_rows(x, queries, truth, pqs if a.faiss == "all" else None)
            targets = {}
            for t in TARGETS:
                best = {}
                for row in rows:
                    if row["recall_at_10"] >= t and (row["family"] not in best or row["bytes_per_vector"] < best[row["family"]]["bytes_per_vector"]):
                        best[row["family"]] = row
                fixed, ec = best.get("vlc fixed-rate"), best.get("vlc ec")
                targets[str(t)] = {
                    "smallest": {f: {"method": b["method"], "bytes_per_vector": b["bytes_per_vector"]} for f, b in sorted(best.items())},
                    "ec_vs_fixed_rate": (ec["bytes_per_vector"] / fixed["bytes_per_vector"] - 1) if ec and fixed else None,
                }
                fi, ei = interpolated(rows, "vlc fixed-rate", t), interpolated(rows, "vlc ec", t)
                targets[str(t)]["interpolated_bytes"] = {"vlc fixed-rate": fi, "vlc ec": ei}
                targets[str(t)]["ec_vs_fixed_rate_interpolated"] = (ei / fi - 1) if fi and ei else None
            results["datasets"][name] = {"n": n, "d": d, "vlc": vlc, "rows": rows, "targets": targets,
                                         "residual_energy": float(var.sum()), "seconds": round(time.time() - started, 1),
                                         "load_average_before": load0, "load_average_after": os.getloadavg()}
            with open(a.out + ".json", "w") as f:
                json.dump(results, f, indent=1)
            print(json.dumps(targets), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
