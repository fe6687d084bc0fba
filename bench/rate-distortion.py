"""Rate-distortion: vlc's residual codecs against FAISS's quantizers at matched bytes per vector.

For each data set: 500 queries drawn from the data (seeded); the truth is each query's exact
top-10 (squared L2 on the originals, the query itself left out). Every method encodes all n
vectors, decodes them, and is scored by
  - MSE: mean over vectors of the squared L2 distance between a vector and its decoding;
  - recall@10: overlap of the exact top-10 with the top-10 found among the decoded vectors, / 10;
  - bytes/vector: vlc: the .vlc file's size / n (anchors, ids, codebooks, codes, headers: all of it);
    FAISS: sa_code_size() — the code alone (IVF: with its list number), its codebooks and centroids
    not counted, which favours FAISS.
vlc (bench/rate-distortion.mjs): anchors learned once per data set by the annealing quantizer on
the CPU (defaults, m below), then none, pq at each byte budget (--bytes B), int4, int8.
FAISS (python3-faiss, Debian): SQ4, SQ8, PQ8/16/32/64, IVF{nlist},PQ16/PQ32 (residual coding by
default), trained on all n vectors; nlist = 1024, or n/39 rounded down to a power of two when n is
too small for 1024 lists (FAISS wants 39 training points per centroid).

Data sets (bench/datasets.py): gm100k (the issue's 100,000 x 128 unit-sphere mixture of 1,000
Gaussians), gm (20,000 x 128, 300 components), digits (scikit-learn's bundled 1,797 x 64 digits: real),
fashion (Fashion-MNIST's 70,000 x 784 images from Debian's dataset-fashion-mnist: real; slow, opt-in).

Usage: /usr/bin/python3 bench/rate-distortion.py [--datasets gm100k,gm,digits] [--out bench/results/rate-distortion]
Needs: npx tsc -p . (dist/), numpy, python3-faiss, python3-matplotlib (the plot; skipped without it),
scikit-learn (digits). Without FAISS it says so and measures vlc alone.
"""
import argparse, datetime, json, os, platform, subprocess, sys, tempfile

# One thread: the benchmark measures quality, not speed, and on a shared machine FAISS's OpenMP
# and BLAS threads oversubscribed the cores and ran many times slower.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from datasets import DATASETS, gm  # noqa: E402

try:
    import faiss
except ImportError:  # the benchmark still measures vlc; the table says FAISS was absent
    faiss = None


def fashion():
    import gzip
    with gzip.open("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz") as f:
        a = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
    with gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz") as f:
        b = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
    return np.concatenate([a, b]).reshape(-1, 784).astype(np.float32)


# name: (make, m anchors, vlc pq byte budgets, pq bits tried). Small sets try 4-bit codes too: their
# 16-entry codebooks cost 16x less, which matters when n is small.
SETS = {
    "gm100k": (lambda: gm(n=100000, k=1000), 1024, [10, 18, 34, 50, 66, 77], "8"),
    "gm": (DATASETS["gm"][0], 256, [10, 18, 34, 50, 77], "8,4"),
    "digits": (DATASETS["digits"][0], 64, [12, 18, 26, 34, 38], "8,4"),
    "fashion": (fashion, 1024, [34, 66, 130, 258, 470], "8"),
}
QUERIES = 500


def recall_and_mse(x, xh, queries, truth):
    idx = faiss.IndexFlatL2(x.shape[1])
    idx.add(xh)
    _, found = idx.search(x[queries], 11)
    hits = 0
    for r, q in enumerate(queries):
        got = [j for j in found[r] if j != q][:10]
        hits += len(set(got) & set(truth[r]))
    return hits / (10 * len(queries)), float(((x - xh) ** 2).sum(1).mean())


def faiss_rows(x, queries):
    n, d = x.shape
    flat = faiss.IndexFlatL2(d)
    flat.add(x)
    _, exact = flat.search(x[queries], 11)
    truth = [[j for j in exact[r] if j != q][:10] for r, q in enumerate(queries)]
    nlist = 1024 if n >= 39 * 1024 else 2 ** int(np.log2(n / 39))
    keys = ["SQ4", "SQ8"] + [f"PQ{M}" for M in (8, 16, 32, 64) if M <= d and d % M == 0]
    keys += [f"IVF{nlist},PQ{M}" for M in (16, 32) if d % M == 0]
    rows = []
    for key in keys:
        index = faiss.index_factory(d, key)
        index.train(x)
        xh = index.sa_decode(index.sa_encode(x))
        recall, mse = recall_and_mse(x, xh, queries, truth)
        rows.append({"method": f"FAISS {key}", "bytes_per_vector": index.sa_code_size(), "mse": mse, "recall_at_10": recall})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="gm100k,gm,digits")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "rate-distortion"))
    a = ap.parse_args()
    root = os.path.dirname(HERE)
    results = {"date": datetime.date.today().isoformat(), "host": platform.node() and "cpu",
               "cpus": os.cpu_count(), "faiss": faiss.__version__ if faiss else None,
               "queries": QUERIES, "datasets": {}}
    if faiss is None:
        print("FAISS is not installed (apt-get install python3-faiss): measuring vlc alone", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.datasets.split(","):
            make, m, budgets, bits = SETS[name]
            x = np.ascontiguousarray(make(), dtype=np.float32)
            n = len(x)
            queries = np.random.default_rng(1).choice(n, QUERIES, replace=False)
            npy, qfile = os.path.join(tmp, f"{name}.npy"), os.path.join(tmp, f"{name}.json")
            np.save(npy, x)
            with open(qfile, "w") as f:
                json.dump([int(q) for q in queries], f)
            print(f"{name}: {n} x {x.shape[1]}, m = {m}", file=sys.stderr, flush=True)
            out = subprocess.run(["node", os.path.join(HERE, "rate-distortion.mjs"), npy, "--m", str(m), "--queries", qfile,
                                  "--budgets", ",".join(map(str, budgets)), "--bits", bits], check=True, capture_output=True, text=True, cwd=root)
            vlc = json.loads(out.stdout.strip().splitlines()[-1])
            rows = vlc.pop("rows") + (faiss_rows(x, queries) if faiss else [])
            results["datasets"][name] = {"n": n, "d": int(x.shape[1]), "vlc": vlc, "rows": rows}
            write(results, a.out)
    write(results, a.out)


def write(results, out):
    with open(out + ".json", "w") as f:
        json.dump(results, f, indent=1)
    lines = [f"# Rate-distortion: vlc vs FAISS ({results['date']}, {results['cpus']}-core CPU, FAISS {results['faiss']})", "",
             "Made by `bench/rate-distortion.py`; definitions in its docstring. vlc's bytes/vector count the whole file; "
             "FAISS's only its codes.", ""]
    for name, ds in results["datasets"].items():
        lines += [f"## {name}: {ds['n']:,} x {ds['d']}, vlc m = {ds['vlc']['m']} (anchor MSE {ds['vlc']['anchor_energy']:.4g})", "",
                  "| method | bytes/vector | MSE | recall@10 |", "|---|---|---|---|"]
        for r in sorted(ds["rows"], key=lambda r: r["bytes_per_vector"]):
            extra = f" (M = {r['pq_subspaces']})" if "pq_subspaces" in r else ""
            lines.append(f"| {r['method']}{extra} | {r['bytes_per_vector']:.1f} | {r['mse']:.4g} | {r['recall_at_10']:.3f} |")
        lines.append("")
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines))
    plot(results, out + ".png")


def plot(results, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (apt-get install python3-matplotlib): no plot", file=sys.stderr)
        return
    sets = results["datasets"]
    fig, axes = plt.subplots(2, len(sets), figsize=(5.5 * len(sets), 8), squeeze=False)
    for col, (name, ds) in enumerate(sets.items()):
        families = {}
        for r in ds["rows"]:
            fam = ("vlc pq 4-bit" if r["method"].startswith("vlc pq 4-bit") else
                   "vlc pq" if r["method"].startswith("vlc pq") else
                   "vlc scalar" if r["method"] in ("vlc int4", "vlc int8") else
                   "vlc none" if r["method"] == "vlc none" else
                   "FAISS IVF-PQ" if r["method"].startswith("FAISS IVF") else
                   "FAISS PQ" if r["method"].startswith("FAISS PQ") else "FAISS SQ")
            families.setdefault(fam, []).append(r)
        for fam, rs in families.items():
            rs.sort(key=lambda r: r["bytes_per_vector"])
            style = dict(marker="o", linestyle="-" if fam.startswith("vlc") else "--")
            b = [r["bytes_per_vector"] for r in rs]
            axes[0][col].plot(b, [r["recall_at_10"] for r in rs], label=fam, **style)
            axes[1][col].plot(b, [r["mse"] for r in rs], label=fam, **style)
        axes[0][col].set_title(f"{name} ({ds['n']:,} x {ds['d']})")
        axes[0][col].set_ylabel("recall@10")
        axes[1][col].set_ylabel("MSE")
        axes[1][col].set_yscale("log")
        for ax in (axes[0][col], axes[1][col]):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("bytes per vector")
            ax.grid(True, alpha=0.3)
        axes[0][col].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=90)


if __name__ == "__main__":
    main()
