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

FAISS's PQ needs M to divide d: where it does not (Fashion-MNIST's d = 784), FAISS gets the vectors
padded with zero columns up to a multiple of M (distances unchanged) and its decodings are cut back
to d; its code size is the same M bytes.

Data sets (bench/datasets.py): gm100k (the issue's 100,000 x 128 unit-sphere mixture of 1,000
Gaussians), gm (20,000 x 128, 300 components: a second synthetic set), fashion (Fashion-MNIST's
60,000 training images, raw 784 pixel values 0..255, from Debian's dataset-fashion-mnist: real),
digits (scikit-learn's bundled 1,797 x 64 digits: real, small, opt-in).

Usage: /usr/bin/python3 bench/rate-distortion.py [--datasets gm100k,gm,fashion] [--out bench/results/rate-distortion]
On a shared machine a data set can be measured in parallel parts (--only vlc / --only faiss, --bits,
--budgets, --faiss-keys) and the parts joined with --merge; --help lists the options.
(/usr/bin/python3: Debian's python3-faiss and python3-matplotlib live there, not in a pyenv python.)
Needs: npx tsc -p . (dist/), numpy, python3-faiss, python3-matplotlib (the plot; skipped without it),
scikit-learn (digits). Without FAISS it says so and measures vlc alone.
"""
import argparse, datetime, json, os, platform, subprocess, sys, tempfile, time

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


FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def fashion():
    import gzip
    if not os.path.exists(FASHION):
        sys.exit(f"{FASHION} is missing: apt-get install dataset-fashion-mnist (or leave fashion out of --datasets)")
    with gzip.open(FASHION) as f:
        a = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
    return a.reshape(-1, 784).astype(np.float32)


# name: (make, m anchors, vlc pq byte budgets, pq bits tried). 4-bit codes (16-entry codebooks, 16x
# cheaper to store) are tried on the 20,000-vector set, where codebook bytes weigh most. The budgets
# are few because each pq subspace trains its own codebook (minutes per rate on a shared 2-core CPU).
# Fashion-MNIST keeps m = 256: at d = 784 each f16 anchor costs 1,568 bytes, 1024 of them 27 bytes
# per vector of the 60,000; 30 % of its f16 size (the second target) is 470 bytes: pq
# --bytes 470, and int4 (d/2 = 392 bytes of codes) below it.
SETS = {
    "gm100k": (lambda: gm(n=100000, k=1000), 1024, [10, 34, 77], "8"),
    "gm": (DATASETS["gm"][0], 256, [10, 18, 34, 50, 77], "8,4"),
    "digits": (DATASETS["digits"][0], 64, [12, 18, 26, 34, 38], "8,4"),
    "fashion": (fashion, 256, [22, 34, 66, 130, 470], "8"),
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


def faiss_rows(x, queries, pqs=None, keys=None):
    n, d = x.shape
    flat = faiss.IndexFlatL2(d)
    flat.add(x)
    _, exact = flat.search(x[queries], 11)
    truth = [[j for j in exact[r] if j != q][:10] for r, q in enumerate(queries)]
    nlist = 1024 if n >= 39 * 1024 else 2 ** int(np.log2(n / 39))
    pqs = pqs or [M for M in (8, 16, 32, 64, 128, 256) if M <= d // 2]
    keys = ([(k, int(k.rsplit("PQ", 1)[1]) if "PQ" in k else 1) for k in keys] if keys else
            [("SQ4", 1), ("SQ8", 1)] + [(f"PQ{M}", M) for M in pqs] + [(f"IVF{nlist},PQ{M}", M) for M in (16, 32) if M in pqs or M == 32])
    rows = []
    for key, M in keys:
        pad = -d % M  # zero columns so that M divides the dimension (see the docstring)
        xp = np.ascontiguousarray(np.pad(x, ((0, 0), (0, pad)))) if pad else x
        t = time.time()
        index = faiss.index_factory(d + pad, key)
        index.train(xp)
        xh = np.ascontiguousarray(index.sa_decode(index.sa_encode(xp))[:, :d])
        seconds = time.time() - t
        recall, mse = recall_and_mse(x, xh, queries, truth)
        rows.append({"method": f"FAISS {key}", "bytes_per_vector": index.sa_code_size(), "mse": mse, "recall_at_10": recall,
                     "encode_seconds": seconds, **({"zero_padded_to": d + pad} if pad else {})})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="gm100k,gm,fashion")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "rate-distortion"))
    ap.add_argument("--keep", action="store_true", help="keep the other data sets already in OUT.json (a run in parts)")
    ap.add_argument("--budgets", help="pq byte budgets instead of the data set's, e.g. 34 or '' (none: only none/int4/int8 and FAISS)")
    ap.add_argument("--m", type=int, help="vlc's anchors instead of the data set's m")
    ap.add_argument("--bits", help="pq bits to try instead of the data set's, e.g. 4 or 8,4")
    ap.add_argument("--dims-budgets", default="", help="B:k pairs of pq on k principal directions (--residual pq --pq-dims k --bytes B) to run, e.g. 34:144,66:192")
    ap.add_argument("--bits-budgets", default="", help="byte budgets of the bits codec (--residual bits --bytes B) to run, e.g. 34,400,470")
    ap.add_argument("--faiss-pq", help="FAISS PQ sizes M instead of 8,16,... up to d/2 (e.g. 16,32 where training is slow)")
    ap.add_argument("--only", choices=("vlc", "faiss"), help="measure one side alone (two runs in parallel; --merge joins their rows)")
    ap.add_argument("--faiss-keys", help="FAISS index_factory keys to run, in this order, ';'-separated (e.g. 'IVF1024,PQ32;PQ32'), "
                                         "instead of SQ4, SQ8, PQ..., IVF...")
    ap.add_argument("--iters", help="cap on the anchors' annealing iterations (default: vlc's)")
    ap.add_argument("--save", help="keep every .vlc file written, in SAVE/<data set>/")
    ap.add_argument("--merge", help="comma-separated result JSONs of runs in parts: write OUT.json/.md/.png of all their data sets, measure nothing")
    ap.add_argument("--log-rows", help="with --merge: NAME=LOG,...: add the rows a run stopped early printed to its stderr LOG "
                                       "(same data set, seed and anchors) to data set NAME, marked from_log")
    ap.add_argument("--note", help="with --merge: a paragraph for the .md saying how the parts were run")
    a = ap.parse_args()
    if a.merge:
        parts = []
        for p in a.merge.split(","):
            with open(p) as f:
                parts.append(json.load(f))
        merged = {**parts[0], **({"note": a.note} if a.note else {}), "parts": [{k: v for k, v in r.items() if k != "datasets"} for r in parts], "datasets": {}}
        for r in parts:
            for name, ds in r["datasets"].items():
                if name in merged["datasets"]:  # the same data set measured in parts (--only): join the rows
                    have = merged["datasets"][name]
                    have["rows"] += [row for row in ds["rows"] if row["method"] not in {h["method"] for h in have["rows"]}]
                    have["vlc"] = have["vlc"] if have["vlc"].get("m") is not None else ds["vlc"]
                else:
                    merged["datasets"][name] = ds
        for spec in (a.log_rows or "").split(","):
            if spec:
                name, log = spec.split("=", 1)
                add_log_rows(merged, name, log)
        return write(merged, a.out)
    root = os.path.dirname(HERE)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "machine": machine(), "cpus": os.cpu_count(), "commit": commit(root),
               "faiss": faiss.__version__ if faiss else None, "numpy": np.__version__,
               "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip(),
               "queries": QUERIES, "datasets": {}}
    if a.keep and os.path.exists(a.out + ".json"):
        with open(a.out + ".json") as f:
            results["datasets"] = json.load(f)["datasets"]
    if faiss is None:
        print("FAISS is not installed (apt-get install python3-faiss): measuring vlc alone", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.datasets.split(","):
            make, m, budgets, bits = SETS[name]
            if a.budgets is not None:
                budgets = [int(b) for b in a.budgets.split(",") if b]
            bits = a.bits or bits
            m = a.m or m
            x = np.ascontiguousarray(make(), dtype=np.float32)
            n = len(x)
            queries = np.random.default_rng(1).choice(n, QUERIES, replace=False)
            npy, qfile = os.path.join(tmp, f"{name}.npy"), os.path.join(tmp, f"{name}.json")
            np.save(npy, x)
            with open(qfile, "w") as f:
                json.dump([int(q) for q in queries], f)
            print(f"{name}: {n} x {x.shape[1]}, m = {m}", file=sys.stderr, flush=True)
            started, load_before = time.time(), os.getloadavg()
            rows, vlc = [], {"m": None, "anchor_energy": None}
            if a.only != "faiss":
                out = subprocess.run(["node", os.path.join(HERE, "rate-distortion.mjs"), npy, "--m", str(m), "--queries", qfile,
                                      "--budgets", ",".join(map(str, budgets)), "--bits", bits, "--bits-budgets", a.bits_budgets, *extra(a, name)], check=True, stdout=subprocess.PIPE, text=True, cwd=root)
                vlc = json.loads(out.stdout.strip().splitlines()[-1])
                rows += vlc.pop("rows")
            pqs = [int(M) for M in a.faiss_pq.split(",")] if a.faiss_pq else None
            if faiss and a.only != "vlc":
                rows += faiss_rows(x, queries, pqs, a.faiss_keys.split(";") if a.faiss_keys else None)
            results["datasets"][name] = {"n": n, "d": int(x.shape[1]), "vlc": vlc, "rows": rows,
                                         "seconds": round(time.time() - started, 1),
                                         "load_average_before": load_before, "load_average_after": os.getloadavg()}
            write(results, a.out)
    write(results, a.out)


def add_log_rows(results, name, log):
    """The rows (vlc's and FAISS's) that a run printed to its stderr log before it was stopped, marked from_log."""
    with open(log) as f:
        lines = f.read().splitlines()
    header = next(l for l in lines if l.startswith(f"{name}: "))  # "NAME: n x d, m = M"
    n, d, m = (int(v) for v in header.split(": ")[1].replace(" x ", " ").replace(", m = ", " ").split())
    ds = results["datasets"].setdefault(name, {"n": n, "d": d, "vlc": {"m": m, "anchor_energy": None}, "rows": []})
    have = {r["method"] for r in ds["rows"]}
    rows = [json.loads(l) for l in lines if l.startswith('{"method"')]
    ds["rows"] += [{**r, "from_log": log} for r in rows if r["method"] not in have]


def extra(a, name):
    """rate-distortion.mjs's optional flags."""
    flags = ["--iters", a.iters] if a.iters else []
    if a.dims_budgets:
        flags += ["--dims-budgets", a.dims_budgets]
    if a.save:
        os.makedirs(os.path.join(a.save, name), exist_ok=True)
        flags += ["--save", os.path.join(a.save, name)]
    return flags


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return f"{platform.machine()} {model} ({os.cpu_count()} logical CPUs, shared), {platform.system()} {platform.release()}"


def commit(root):
    r = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    return r.stdout.strip() + ("+dirty" if dirty else "") if r.returncode == 0 else None


def write(results, out):
    with open(out + ".json", "w") as f:
        json.dump(results, f, indent=1)
    lines = [f"# Rate-distortion: vlc vs FAISS ({results['date']}, commit {results['commit']}, FAISS {results['faiss']})", "",
             f"Machine: {results['machine']}. Made by `bench/rate-distortion.py`; definitions in its docstring. "
             "vlc's bytes/vector count the whole file (anchors, ids, codebooks, codes, headers); FAISS's only its codes.", ""]
    if results.get("note"):
        lines += [results["note"], ""]
    for name, ds in results["datasets"].items():
        load = ds.get("load_average_before")
        energy = ds["vlc"].get("anchor_energy")
        lines += [f"## {name}: {ds['n']:,} x {ds['d']}, vlc m = {ds['vlc']['m']}" + (f" (anchor MSE {energy:.4g})" if energy else ""), "",
                  (f"{ds.get('seconds', '?')} s; load average (1/5/15 min) before {load}, after {ds.get('load_average_after')}." if load
                   else "Timing and load: see the logged run."), "",
                  "| method | bytes/vector | MSE | recall@10 |", "|---|---|---|---|"]
        for r in sorted(ds["rows"], key=lambda r: r["bytes_per_vector"]):
            extra = f" (M = {r['pq_subspaces']})" if "pq_subspaces" in r else ""
            extra += " †" if r.get("from_log") else ""
            lines.append(f"| {r['method']}{extra} | {r['bytes_per_vector']:.1f} | {r['mse']:.4g} | {r['recall_at_10']:.3f} |")
        if any(r.get("from_log") for r in ds["rows"]):
            lines.append("† from the stderr log of a run of the same data, seed and anchors that was stopped before it finished "
                         "(the shared CPU was too slow for every budget); unmarked rows come from a complete run.")
        lines.append("")
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines))
    plot(results, out + ".png")


# One colour per method family in every panel.
COLORS = {"vlc pq --pq-dims": "tab:olive", "vlc bits": "tab:brown", "vlc none": "tab:gray", "vlc pq": "tab:blue", "vlc pq 4-bit": "tab:cyan", "vlc scalar": "tab:green",
          "FAISS SQ": "tab:red", "FAISS PQ": "tab:orange", "FAISS IVF-PQ": "tab:purple"}


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
                   "vlc pq --pq-dims" if r["method"].startswith("vlc pq --pq-dims") else
                   "vlc pq" if r["method"].startswith("vlc pq") else
                   "vlc bits" if r["method"].startswith("vlc bits") else
                   "vlc scalar" if r["method"] in ("vlc int4", "vlc int8") else
                   "vlc none" if r["method"] == "vlc none" else
                   "FAISS IVF-PQ" if r["method"].startswith("FAISS IVF") else
                   "FAISS PQ" if r["method"].startswith("FAISS PQ") else "FAISS SQ")
            families.setdefault(fam, []).append(r)
        for fam, rs in families.items():
            rs.sort(key=lambda r: r["bytes_per_vector"])
            style = dict(marker="o", linestyle="-" if fam.startswith("vlc") else "--", color=COLORS.get(fam))
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
