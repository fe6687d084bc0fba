"""Rate-distortion of vlc's residual codecs against FAISS, LanceDB (RaBitQ) and the Gaussian bound,
in one command (issue 28, item 4). One results file and one plot per data set:
bench/results/DATE-rd-peers-NAME.json and .svg.

Queries and truth (the same for every method): 500 rows drawn from the data (numpy
default_rng(1), as bench/ec-rd.py); the truth is each query's exact top-10 among the n originals
(squared L2, FAISS IndexFlatL2, the query itself left out). Each point:
  - bytes/vector of the WHOLE stored thing: vlc: the .vlc file / n (anchors, ids, models, headers);
    FAISS: faiss.serialize_index after add / n (codes, trained tables, rotation, IVF centroids and
    its lists' int64 ids), beside code_bytes = sa_code_size() (the code alone, IVF list number in it);
    LanceDB: the index's files on disk (_indices: centroids, RaBitQ codes and factors, row ids) / n,
    the raw vectors the table also keeps not counted;
  - recall@10: vlc and FAISS: exact search over the decoded vectors (sa_encode/sa_decode: IVF adds
    its centroid back); LanceDB: its own search, every partition probed, no refine (RaBitQ distance
    estimates, the raw vectors never read);
  - MSE: mean squared L2 error a vector of the decoded vectors (LanceDB does not decode: null).
Methods: vlc (bench/rate-distortion.mjs: anchors learned once, then none, int4, int8, bits / pq /
pq --pq-dims at their --bytes and ec at its --bytes); FAISS SQ4/SQ6/SQ8, PQ M, OPQ M (OPQ{M},PQ{M}),
IVF-residual PQ (IVF{nlist},PQ{M}: PQ of x − its list's centroid); LanceDB IVF_RQ at numBits b
(bench/rd-lancedb.mjs; skipped, saying so, when bench/.peers lacks @lancedb/lancedb).
FAISS's PQ needs M | d: d is padded with zero columns when it does not divide (distances unchanged).
The bound: the residual r = x − anchor of vlc's anchors has covariance eigenvalues λ_i; a Gaussian
source with that spectrum needs R(D) = Σ ½ log2(λ_i / min(θ, λ_i)) bits at MSE D (reverse water-
filling); plotted as the anchors-only file + R(D)/8 bytes, and each ec point's gap is its residual
bits (its file less the anchors-only file) less R(its MSE), per dimension (bench/ec-rd.py's rule).
Targets: for recall@10 0.90/0.95/0.99 each curve (one codec family at its budgets) is made
monotone (a larger file keeps the best recall seen so far) and the bytes at the target are
interpolated linearly in log(1 − recall) between its two bracketing points (bench/ec-rd.py's
interpolated()); a curve whose smallest point already reaches the target gives that point's bytes,
one that never reaches it gives none. Per group (vlc ec; vlc fixed-rate; FAISS; LanceDB) the
smallest over its curves, beside the smallest measured file reaching the target.

Usage: nice -n 10 /usr/bin/python3 bench/rd-peers.py [--datasets gm100k,fashion] [--parts vlc,faiss,lancedb]
         [--queries 500] [--iters 20] [--merge] [--as-part NAME] [--out-dir bench/results]
--parts runs only those parts; with --merge the rows of the parts not run are kept from the existing
results file (so parts can run as separate processes); --as-part NAME stores the one part run under
NAME (e.g. `--parts faiss --as-part faiss-opq --opq 64 --faiss-pq '' --ivf-pq ''` adds OPQ beside the
faiss part's rows; a method measured by a part of the plain name keeps that row). Then `bench/rd-svg.py` draws the plot
(rd-peers.py calls it after each data set). FAISS as Debian ships it links the reference BLAS
(training 20x slower): LD_LIBRARY_PATH=<dir of an OpenBLAS libblas.so.3> makes it use OpenBLAS;
the results say which libblas was loaded.
Needs: npx tsc -p . (dist/), /usr/bin/python3 with numpy and python3-faiss, dataset-fashion-mnist.
"""
import argparse, datetime, importlib.util, json, os, platform, subprocess, sys, tempfile, time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from datasets import gm  # noqa: E402


def _load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ecrd = _load("ecrd", "ec-rd.py")  # fashion(), water_filling_bits(), interpolated(), recall_mse()
svg = _load("rdsvg", "rd-svg.py")
faiss = ecrd.faiss

# name: make, vlc m, vlc budgets {ec, bits, pq, pq-dims B:k}, FAISS {pq M list, opq M list, ivf nlist, ivf M list},
# LanceDB numBits list and partitions. Budgets span recall@10 ~0.8 .. 0.995 on each set; few, as each point
# costs minutes on a shared 2-core CPU (vlc pq, whose codebook training is slowest, measured below bits
# at the same bytes in bench/results/rate-distortion-gm100k.json: `--pq 34,66` adds it).
SETS = {
    "gm100k": dict(make=lambda: gm(n=100000, k=1000), m=1024,
                   ec=[44, 52, 60, 68, 84, 104, 124, 144], bits=[56, 76, 100, 120, 130], pq=[], dims=[],
                   faiss_pq=["32", "64"], opq=[64], ivf=1024, ivf_pq=[32, 64], lance_bits=[1, 2, 4, 8], partitions=1024),
    "fashion": dict(make=ecrd.fashion, m=256,
                    ec=[150, 230, 330, 450], bits=[320, 450, 600], pq=[], dims=[],
                    faiss_pq=["196", "392"], opq=[196], ivf=256, ivf_pq=[196, 392], lance_bits=[1, 2, 4, 8], partitions=256),
    "smoke": dict(make=lambda: gm(n=4000, k=60), m=64, ec=[24, 46, 84], bits=[40, 76], pq=[30], dims=["30:64"],
                  faiss_pq=["16", "32"], opq=[16], ivf=64, ivf_pq=[16], lance_bits=[1, 4], partitions=64),
    # The larger mixtures (fewer budgets): hours on a shared 2-core CPU, meant for a bigger host.
    "gm1m384": dict(make=lambda: gm(n=1000000, d=384, k=1000), m=1024, ec=[150, 250, 400], bits=[200, 400], pq=[], dims=[],
                    faiss_pq=["96", "192"], opq=[96], ivf=1024, ivf_pq=[96, 192], lance_bits=[1, 4, 8], partitions=1024),
    "gm200k1536": dict(make=lambda: gm(n=200000, d=1536, k=1000), m=1024, ec=[600, 1000, 1600], bits=[800, 1600], pq=[], dims=[],
                       faiss_pq=["384", "768"], opq=[], ivf=1024, ivf_pq=[384], lance_bits=[1, 4, 8], partitions=1024),
}
QUERIES = 500
# The lists --NAME overrides, and how each entry is read.
BUDGETS = {"ec": float, "bits": float, "pq": float, "dims": str, "faiss_pq": str, "opq": int, "ivf_pq": int, "lance_bits": int}
TARGETS = (0.90, 0.95, 0.99)
GROUPS = {"vlc ec": ("vlc ec",), "vlc fixed-rate": ("vlc bits", "vlc pq", "vlc pq-dims", "vlc int4", "vlc int8"),
          "FAISS": ("FAISS SQ", "FAISS PQ", "FAISS OPQ", "FAISS IVF-PQ"), "LanceDB": ("LanceDB IVF_RQ",)}


def curve_of(method):
    """The curve (one codec at its budgets) a row belongs to."""
    for prefix, curve in (("vlc ec", "vlc ec"), ("vlc bits", "vlc bits"), ("vlc pq --pq-dims", "vlc pq-dims"), ("vlc pq", "vlc pq"),
                          ("vlc int4", "vlc int4"), ("vlc int8", "vlc int8"), ("vlc none", "vlc none"), ("FAISS SQ", "FAISS SQ"),
                          ("FAISS OPQ", "FAISS OPQ"), ("FAISS IVF", "FAISS IVF-PQ"), ("FAISS PQ", "FAISS PQ"), ("LanceDB", "LanceDB IVF_RQ")):
        if method.startswith(prefix):
            return curve
    raise ValueError(method)


def blas():
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    return sorted(libs)


def run_vlc(name, cfg, x, queries, iters, tmp):
    n, d = x.shape
    npy, qfile, rfile = (os.path.join(tmp, f"{name}{e}") for e in (".npy", ".json", ".f32"))
    np.save(npy, x)
    with open(qfile, "w") as f:
        json.dump([int(q) for q in queries], f)
    out = subprocess.run(["node", os.path.join(HERE, "rate-distortion.mjs"), npy, "--m", str(cfg["m"]), "--queries", qfile,
                          "--budgets", ",".join(map(str, cfg["pq"])), "--dims-budgets", ",".join(cfg["dims"]),
                          "--bits-budgets", ",".join(map(str, cfg["bits"])), "--ec-budgets", ",".join(map(str, cfg["ec"])),
                          "--iters", str(iters), "--residual-out", rfile], check=True, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    vlc = json.loads(out.stdout.strip().splitlines()[-1])
    rows = vlc.pop("rows")
    r = np.fromfile(rfile, dtype=np.float32).reshape(n, d).astype(np.float64)
    lam = np.clip(np.linalg.eigvalsh(r.T @ r / n), 0, None)
    for row in rows:
        row["code_bytes"] = None  # vlc has no fixed code size (ec is variable-length); the whole file is its size
    return rows, {"vlc": vlc, "residual_eigenvalues": lam.tolist(), "residual_energy": float(lam.sum())}


def imported(path, name, queries):
    """vlc rows from a bench/ec-rd.py results file: the same data set, queries and truth rule (its
    --queries must equal ours: default_rng(1).choice(n, queries) is then the same rows); each row keeps
    its file and commit. Its anchors' residual spectrum is not in such a file: the bound curve is left
    out, each ec row keeps the gap ec-rd.py computed from the same residual."""
    src = json.load(open(path))
    if src.get("queries") != queries:
        sys.exit(f"--import-vlc {path}: it used {src.get('queries')} queries, this run {queries}: not the same truth")
    ds = src["datasets"][name]
    keep = ("method", "bytes_per_vector", "mse", "recall_at_10", "encode_seconds", "residual_bits_per_dim", "bound_bits_per_dim", "gap_bits_per_dim")
    rows = [{**{k: r[k] for k in keep if k in r}, "code_bytes": None, "source": os.path.basename(path), "source_commit": src.get("commit")}
            for r in ds["rows"] if r["method"].startswith("vlc")]
    info = {"imported_from": os.path.basename(path), "commit": src.get("commit"), "date": src.get("date"), "command": src.get("command"), "iters": src.get("iters")}
    return rows, {**info, "vlc": ds.get("vlc")}


def run_faiss(cfg, x, queries, truth, partial, verbose=False):
    keys = [(f"SQ{b}", f"SQ{b}", 1) for b in (4, 6, 8)]
    # "np": no polysemous training (a code reordering for Hamming filtering that leaves the decoded
    # vectors as they are, and took most of FAISS PQ's training time here).
    keys += [(f"PQ{M}", f"PQ{M}np", int(M.split("x")[0])) for M in cfg["faiss_pq"]]
    keys += [(f"OPQ{M}", f"OPQ{M},PQ{M}np", M) for M in cfg["opq"]]
    keys += [(f"IVF{cfg['ivf']},PQ{M}", f"IVF{cfg['ivf']},PQ{M}np", M) for M in cfg["ivf_pq"]]
    rows = []
    for label, key, M in keys:
        k = cfg.get("pq_train_per_centroid") if M > 1 else None
        got = ecrd.faiss_measure(x, queries, truth, key, M, k, verbose)
        rows.append({"method": f"FAISS {label}", "params": {"factory": key, "padded_d": got.pop("padded_d"), "pq_train_points_per_centroid": k or (256 if M > 1 else None)}, **got})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        partial(rows)
    return rows


def run_lancedb(cfg, x, queries, truth, tmp):
    n, d = x.shape
    if not cfg["lance_bits"]:
        return [], "no --lance-bits given"
    data, qfile = os.path.join(tmp, "lance.f32"), os.path.join(tmp, "lance-q.json")
    x.astype("<f4").tofile(data)
    with open(qfile, "w") as f:
        json.dump([int(q) for q in queries], f)
    out = subprocess.run(["node", os.path.join(HERE, "rd-lancedb.mjs"), data, str(n), str(d), qfile, "--bits", ",".join(map(str, cfg["lance_bits"])),
                          "--partitions", str(cfg["partitions"])], check=True, stdout=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "RUST_LOG": "error"})
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if "absent" in res:
        print(f"LanceDB skipped: {res['absent']} (npm install --prefix bench/.peers @lancedb/lancedb@0.39.0 apache-arrow@18)", file=sys.stderr, flush=True)
        return [], res["absent"]
    rows = []
    for r in res["rows"]:
        if "error" in r:
            print(f"LanceDB IVF_RQ {r['bits']}-bit failed: {r['error']}", file=sys.stderr, flush=True)
            continue
        hits = sum(len(set([j for j in found if j != q][:10]) & set(truth[i])) for i, (q, found) in enumerate(zip(queries, r["found"])))
        rows.append({"method": f"LanceDB IVF_RQ {r['bits']}-bit", "params": {"index": r["index_type"], "num_bits": r["bits"], "num_partitions": r["partitions"],
                                                                              "nprobes": r["partitions"], "refine": None, "lancedb": res["version"]},
                     "bytes_per_vector": r["bytes_per_vector"], "code_bytes": None, "mse": None, "recall_at_10": hits / (10 * len(queries)),
                     "seconds": r["build_seconds"] + r["search_seconds"]})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows, f"@lancedb/lancedb {res['version']}"


def bound_and_targets(ds):
    rows, d = ds["rows"], ds["d"]
    for row in rows:
        row["curve"] = curve_of(row["method"])
    lam = np.array(ds.get("residual_eigenvalues") or [])
    none = next((r for r in rows if r["method"] == "vlc none"), None)
    if len(lam) and none:
        for row in rows:
            if row["curve"] == "vlc ec" and "source" not in row:  # an imported row keeps the gap ec-rd.py computed
                row["residual_bits_per_dim"] = 8 * (row["bytes_per_vector"] - none["bytes_per_vector"]) / d
                row["bound_bits_per_dim"] = ecrd.water_filling_bits(lam, row["mse"]) / d
                row["gap_bits_per_dim"] = row["residual_bits_per_dim"] - row["bound_bits_per_dim"]
        mses = [r["mse"] for r in rows if r["mse"]]
        grid = np.geomspace(min(mses) / 2, lam.sum(), 60)
        ds["bound_curve"] = [{"mse": float(D), "bytes_per_vector": none["bytes_per_vector"] + ecrd.water_filling_bits(lam, D) / 8} for D in grid]
    targets = {}
    for t in TARGETS:
        entry = {}
        for group, curves in GROUPS.items():
            interp = {c: ecrd.interpolated([{**r, "family": r["curve"]} for r in rows], c, t) for c in curves}
            interp = {c: b for c, b in interp.items() if b is not None}
            hit = [r for r in rows if r["curve"] in curves and r["recall_at_10"] >= t]
            small = min(hit, key=lambda r: r["bytes_per_vector"]) if hit else None
            best = min(interp, key=interp.get) if interp else None
            entry[group] = {"interpolated_bytes": interp.get(best), "curve": best, "per_curve": interp,
                            "smallest_measured": {"method": small["method"], "bytes_per_vector": small["bytes_per_vector"], "recall_at_10": small["recall_at_10"]} if small else None}
        ec, fixed = entry["vlc ec"]["interpolated_bytes"], entry["vlc fixed-rate"]["interpolated_bytes"]
        entry["ec_vs_fixed_rate_interpolated"] = (ec / fixed - 1) if ec and fixed else None
        targets[str(t)] = entry
    ds["targets"] = targets


def write(path, ds, rows, runs, mine, parts, merge, last):
    """The results file: this run's rows, with --merge those of the other parts as the file holds them
    now (re-read here, so parts run as separate processes do not drop each other's rows)."""
    prev = json.load(open(path)) if merge and os.path.exists(path) else {}
    ds = {**{k: v for k, v in prev.items() if k not in ("rows", "targets", "bound_curve")}, **ds, **mine}
    ds["runs"] = {**prev.get("runs", {}), **runs}
    ds.update({k: last[k] for k in ("date", "commit", "machine", "host")})
    rows = [r for r in prev.get("rows", []) if r["part"] not in parts] + rows
    # Rows taken from elsewhere (an ec-rd.py file; a stopped run's printed rows, part "*-log") give way to
    # a fresh measurement of the same method.
    fresh = {r["method"] for r in rows if r["part"] in ("vlc", "faiss", "lancedb")}
    ds["rows"] = [r for r in rows if r["part"] in ("vlc", "faiss", "lancedb") or r["method"] not in fresh]
    bound_and_targets(ds)
    with open(path + ".tmp", "w") as f:
        json.dump(ds, f, indent=1)
    os.replace(path + ".tmp", path)
    return ds


def summary(ds):
    """The table of the report: per target, each group's smallest interpolated bytes (its curve), and ec's gaps."""
    out = [f"{ds['name']} {ds['n']} x {ds['d']}: whole-file bytes/vector at recall@10 (interpolated, curve)",
           "| recall@10 | " + " | ".join(GROUPS) + " | ec vs fixed-rate |", "|---" * (len(GROUPS) + 2) + "|"]
    for t, e in ds["targets"].items():
        cell = lambda g: f"{e[g]['interpolated_bytes']:.1f} ({e[g]['curve']})" if e[g]["interpolated_bytes"] else "not reached"
        rel = e["ec_vs_fixed_rate_interpolated"]
        out.append(f"| {t} | " + " | ".join(cell(g) for g in GROUPS) + (f" | {rel:+.1%} |" if rel is not None else " | - |"))
    gaps = [(r["method"], r["residual_bits_per_dim"], r["gap_bits_per_dim"]) for r in ds["rows"] if r.get("gap_bits_per_dim") is not None]
    out += [f"ec gap to the bound: {m}: {b:.2f} bits/dim, gap {g:+.3f} bits/dim" for m, b, g in sorted(gaps, key=lambda v: v[1])]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="gm100k,fashion")
    ap.add_argument("--parts", default="vlc,faiss,lancedb")
    ap.add_argument("--queries", type=int, default=QUERIES)
    ap.add_argument("--iters", type=int, default=20, help="cap on the anchors' annealing iterations")
    ap.add_argument("--merge", action="store_true", help="keep the rows of parts not run from the existing results file")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    ap.add_argument("--as-part", default=None, help="store the one part run under this name (e.g. faiss-opq with --merge: OPQ added beside the faiss part's rows)")
    for key in BUDGETS:
        ap.add_argument(f"--{key.replace('_', '-')}", default=None, help=f"override the data set's {key} list (comma-separated; empty: none)")
    ap.add_argument("--pq-train-per-centroid", type=int, default=None, help="FAISS PQ k-means sample a centroid (default FAISS's 256; 64 trains 4x faster)")
    ap.add_argument("--faiss-verbose", action="store_true", help="FAISS's training log on stderr (OPQ's iterations timed): to estimate a long run early")
    ap.add_argument("--import-vlc", default=None, help="NAME=FILE[,NAME=FILE]: vlc rows measured by bench/ec-rd.py (same --queries) instead of the vlc part")
    a = ap.parse_args()
    imports = dict(kv.split("=", 1) for kv in a.import_vlc.split(",")) if a.import_vlc else {}
    parts = set(a.parts.split(","))
    if a.as_part and len(parts) != 1:
        sys.exit("--as-part names one part: give --parts one part")
    if not parts <= {"vlc", "faiss", "lancedb"}:
        sys.exit(f"--parts: unknown part in {a.parts!r} (vlc, faiss, lancedb)")
    if faiss is None:
        sys.exit("FAISS is not importable by this python: run /usr/bin/python3 (Debian's python3-faiss); it also scores every method")
    day = datetime.date.today().isoformat()
    os.makedirs(a.out_dir, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    for name in a.datasets.split(","):
        if name not in SETS:
            sys.exit(f"--datasets: unknown data set {name!r} ({', '.join(SETS)})")
        cfg = dict(SETS[name], pq_train_per_centroid=a.pq_train_per_centroid)
        for key, conv in BUDGETS.items():
            v = getattr(a, key)
            if v is not None:
                cfg[key] = [conv(t) for t in v.split(",") if t]
        out = os.path.join(a.out_dir, f"{day}-rd-peers-{name}")
        x = np.ascontiguousarray(cfg["make"](), dtype=np.float32)
        n, d = x.shape
        queries = np.random.default_rng(1).choice(n, a.queries, replace=False)
        flat = faiss.IndexFlatL2(d)
        flat.add(x)
        _, exact = flat.search(x[queries], 11)
        truth = [[j for j in exact[i] if j != q][:10] for i, q in enumerate(queries)]
        print(f"{name}: {n} x {d}, parts {sorted(parts)}", file=sys.stderr, flush=True)
        ds = {"name": name, "n": n, "d": d, "queries": {"count": a.queries, "rule": "rows drawn from the data, numpy default_rng(1).choice(n, count, replace=False); truth: exact top-10 among the n originals, the query left out"}}
        rows, runs, mine = [], {}, {}

        def save(part, got, info, t0, load0):
            """Writes the file with this part's rows so far (a part stopped midway keeps what it measured)."""
            here = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "commit": commit + ("+dirty" if dirty else ""),
                    "host": platform.node(), "cpus": os.cpu_count(), "machine": f"{os.cpu_count()}-core CPU (shared)", "seconds": round(time.time() - t0, 1),
                    "load_average_before": load0, "load_average_after": os.getloadavg(), "command": " ".join(["bench/rd-peers.py"] + sys.argv[1:])}
            part = a.as_part or part
            runs[part] = {**here, **info}
            return write(out + ".json", ds, rows + [{**r, "part": part} for r in got], runs, mine, set(runs), a.merge, here)

        with tempfile.TemporaryDirectory() as tmp:
            for part in ("vlc", "vlc-imported", "faiss", "lancedb"):
                if part not in parts and not (part == "vlc-imported" and name in imports):
                    continue
                t0, load0 = time.time(), os.getloadavg()
                if part == "vlc-imported":
                    got, info = imported(imports[name], name, a.queries)
                elif part == "vlc":
                    got, mine = run_vlc(name, cfg, x, queries, a.iters, tmp)
                    info = {"iters": a.iters, "m": cfg["m"]}
                elif part == "faiss":
                    info = {"faiss": faiss.__version__, "blas": blas()}
                    got = run_faiss(cfg, x, queries, truth, lambda partial: save("faiss", partial, {**info, "complete": False}, t0, load0),
                                    a.faiss_verbose)
                else:
                    got, what = run_lancedb(cfg, x, queries, truth, tmp)
                    info = {"lancedb": what}
                final = save(part, got, info, t0, load0)
                rows += [{**r, "part": a.as_part or part} for r in got]
        svg.plot_file(out + ".json", out + ".svg")
        print(summary(final), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
