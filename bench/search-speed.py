"""Search speed on the CPU: `vlc search` over a pq-coded file against FAISS IVF-PQ, at equal recall@10.

Data: the issue's 100,000 x 128 unit-sphere mixture of 1,000 Gaussians (bench/datasets.py gm, the
same base as rate-distortion.py's gm100k) and 10,000 queries drawn fresh from the same mixture
(same centres, other noise). Truth: each query's exact top-10 (squared L2, FAISS IndexFlatL2).
recall@10 = overlap of the found top-10 with the exact top-10, / 10, over all queries.

vlc: `vlc compress --anchors 1024 --residual pq --bytes 34` (CPU), then bench/search-speed.mjs
times reading the file, building the index, and searching all queries at each nprobe (both cores).
FAISS (python3-faiss): IVF1024,PQ32 (34 bytes per vector with its list number, residual coding,
precomputed tables), trained and filled with the same base, searched at each nprobe with
omp_set_num_threads(cores). Times are the search call alone for both, as wall-clock seconds and as
CPU seconds of the process (every thread): on a machine shared with other jobs the wall clock
mostly measures them, and queries per CPU-second is the fairer figure. vlc's file read and index
build are reported beside them. The machine is shared: the load average
before and after each half is recorded.

"Equal recall": for each vlc point, FAISS's queries/s at the same recall@10, interpolated linearly
between the two FAISS nprobe settings whose recalls bracket it (none when FAISS never reaches it).
Where FAISS never reaches a vlc point's recall, the point is compared with FAISS's fastest setting
among those of recall at most the vlc point's ("FAISS's fastest at recall <= vlc's"): vlc answering
more queries a second there means no FAISS setting is both faster and as accurate.
The load average (1 min) should be below 1.5 for figures to rely on: each half records it.

Usage: /usr/bin/python3 bench/search-speed.py [--work DIR] [--out bench/results/search-speed]
--faiss-only / --vlc-only measure one half alone into OUT.faiss.json / OUT.vlc.json, which a later
run reuses (so the halves can run apart, e.g. FAISS while the vlc file is being made; both record
when they ran and the load).
(--work keeps base.npy, queries.npy and base.vlc there and reuses them when present; --vlc FILE
searches a file of the same base made elsewhere, e.g. by rate-distortion.py --save.)
"""
import argparse, datetime, json, os, platform, subprocess, sys, tempfile, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from datasets import gm  # noqa: E402
import faiss  # noqa: E402

K = 10
NPROBES = [1, 2, 4, 8, 16, 32, 64]


def mixture_queries(nq, d=128, k=1000, noise=0.3, seed=42):
    """nq new points of gm(k=1000)'s mixture: its centres (the same seed's first draw), fresh noise."""
    c = np.random.default_rng(seed).normal(size=(k, d))
    rng = np.random.default_rng(7)
    x = c[rng.integers(0, k, nq)] + noise * rng.normal(size=(nq, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def recall(found, truth):
    return sum(len(set(f) & set(t)) for f, t in zip(found.tolist(), truth.tolist())) / (K * len(truth))


def at_equal_recall(r, points, key="queries_per_second"):
    """`key` (queries/s) of `points` (sorted by nprobe) interpolated at recall r, or None."""
    for a, b in zip(points, points[1:]):
        if min(a["recall_at_10"], b["recall_at_10"]) <= r <= max(a["recall_at_10"], b["recall_at_10"]) and a["recall_at_10"] != b["recall_at_10"]:
            f = (r - a["recall_at_10"]) / (b["recall_at_10"] - a["recall_at_10"])
            return a[key] + f * (b[key] - a[key])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "search-speed"))
    ap.add_argument("--bytes", default="34")
    ap.add_argument("--faiss-only", action="store_true", help="measure FAISS alone into OUT.faiss.json (run first while the vlc file is made)")
    ap.add_argument("--vlc-only", action="store_true", help="measure vlc alone into OUT.vlc.json")
    ap.add_argument("--vlc", help="search this .vlc of the same base instead of compressing (e.g. rate-distortion.py --save's pq-bytes-34.vlc)")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="vlc-search-")
    os.makedirs(work, exist_ok=True)
    base_npy, q_npy, vlc_file = (os.path.join(work, f) for f in ("base.npy", "queries.npy", "base.vlc"))
    x = gm(n=100000, k=1000)
    q = mixture_queries(10000)
    np.save(base_npy, x)
    np.save(q_npy, q)
    n, d = x.shape
    cores = os.cpu_count()
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": f"{platform.machine()} ({cores} logical CPUs, shared with other work)",
           "commit": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or None,
           "faiss": faiss.__version__, "n": n, "d": d, "queries": len(q), "k": K}
    flat = faiss.IndexFlatL2(d)
    flat.add(x)
    _, truth = flat.search(q, K)

    if a.faiss_only:
        return faiss_half(x, q, truth, cores, a.out)
    if a.vlc:
        vlc_file = a.vlc
        res["vlc_file"] = f"given: {a.vlc} (not compressed by this run)"
    elif not os.path.exists(vlc_file):
        t = time.time()
        out = subprocess.run(["node", os.path.join(ROOT, "bin", "vlc.js"), "compress", base_npy, "-o", vlc_file, "--anchors", "1024",
                              "--residual", "pq", "--bytes", a.bytes, "--json"], check=True, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        res["vlc_compress"] = {"seconds": time.time() - t, "result": json.loads(out.stdout)}
    vlc = res["vlc"] = vlc_half(vlc_file, q_npy, work, truth, a.out)
    if a.vlc_only:
        return
    fz = res["faiss_ivfpq"] = faiss_half(x, q, truth, cores, a.out)
    for r in vlc["runs"]:
        f = at_equal_recall(r["recall_at_10"], fz["runs"])
        r["faiss_qps_at_equal_recall"] = f
        r["speed_vs_faiss"] = r["queries_per_second"] / f if f else None
        c = at_equal_recall(r["recall_at_10"], fz["runs"], "queries_per_cpu_second")
        r["faiss_queries_per_cpu_second_at_equal_recall"] = c
        r["cpu_efficiency_vs_faiss"] = r["queries_per_cpu_second"] / c if c else None
        below = [x for x in fz["runs"] if x["recall_at_10"] <= r["recall_at_10"]]
        best = max(below, key=lambda x: x["queries_per_second"]) if below else None
        r["faiss_fastest_at_lower_or_equal_recall"] = {k: best[k] for k in ("nprobe", "recall_at_10", "queries_per_second")} if best else None
        r["speed_vs_faiss_fastest_at_lower_or_equal_recall"] = r["queries_per_second"] / best["queries_per_second"] if best else None
    write(res, a.out)


def vlc_half(vlc_file, q_npy, work, truth, out):
    """bench/search-speed.mjs on the file at each nprobe, recall added; kept in OUT.vlc.json and reused from it."""
    if os.path.exists(out + ".vlc.json"):
        with open(out + ".vlc.json") as f:
            return json.load(f)
    load, at = os.getloadavg(), datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    proc = subprocess.run(["node", os.path.join(HERE, "search-speed.mjs"), vlc_file, q_npy, work, "--nprobe", ",".join(map(str, NPROBES))],
                          check=True, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    vlc = json.loads(proc.stdout)
    vlc["measured_at"], vlc["load_average_before"], vlc["load_average_after"] = at, load, os.getloadavg()
    for r in vlc["runs"]:
        ids = np.fromfile(os.path.join(work, f"ids-{r['nprobe']}.i32"), dtype="<i4").reshape(-1, K)
        r["recall_at_10"] = recall(ids, truth)
        print(json.dumps({"vlc": r}), file=sys.stderr, flush=True)
    with open(out + ".vlc.json", "w") as f:
        json.dump(vlc, f, indent=1)
    return vlc


def faiss_half(x, q, truth, cores, out):
    """FAISS IVF1024,PQ32 on the same base, searched at each nprobe; kept in OUT.faiss.json and reused from it."""
    if os.path.exists(out + ".faiss.json"):
        with open(out + ".faiss.json") as f:
            return json.load(f)
    n, d = x.shape
    faiss.omp_set_num_threads(cores)
    t = time.time()
    index = faiss.index_factory(d, "IVF1024,PQ32")
    index.train(x)
    index.add(x)
    fz = {"method": "IVF1024,PQ32", "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "code_bytes": index.sa_code_size(), "build_seconds": time.time() - t, "threads": cores,
          "load_average_before": os.getloadavg(), "runs": []}
    for nprobe in NPROBES:
        index.nprobe = nprobe
        t, cpu = time.time(), time.process_time()
        _, ids = index.search(q, K)
        s, c = time.time() - t, time.process_time() - cpu
        fz["runs"].append({"nprobe": nprobe, "search_seconds": s, "queries_per_second": len(q) / s, "cpu_seconds": c,
                           "queries_per_cpu_second": len(q) / c, "recall_at_10": recall(ids, truth)})
        print(json.dumps({"faiss": fz["runs"][-1]}), file=sys.stderr, flush=True)
    fz["load_average_after"] = os.getloadavg()
    with open(out + ".faiss.json", "w") as f:
        json.dump(fz, f, indent=1)
    return fz


def write(res, out):
    with open(out + ".json", "w") as f:
        json.dump(res, f, indent=1)
    v, fz = res["vlc"], res["faiss_ivfpq"]
    pq = v["pq"] or {}
    lines = [f"# Search speed on the CPU: vlc vs FAISS IVF-PQ ({res['date']}, commit {res['commit']}, FAISS {res['faiss']})", "",
             f"{res['machine']}. {res['n']:,} x {res['d']} mixture, {res['queries']:,} fresh queries, k = {res['k']}; "
             "made by `bench/search-speed.py` (definitions there). Times: the search call alone, both cores.", "",
             f"vlc: m = {v['m']}, pq M = {pq.get('M')} ({pq.get('bits')}-bit), file {v['file_bytes'] / v['n']:.1f} bytes/vector; "
             f"measured at {v['measured_at']}; file read {v['read_seconds']:.2f} s, index build {v['index_seconds']:.2f} s; load average before/after "
             f"{v['load_average_before']} / {v['load_average_after']}.",
             f"FAISS {fz['method']}: {fz['code_bytes']} bytes/vector of codes; measured at {fz.get('measured_at')}; build {fz['build_seconds']:.1f} s; load average before/after "
             f"{fz['load_average_before']} / {fz['load_average_after']}.", "",
             "| method | nprobe | recall@10 | queries/s (wall) | queries per CPU-second | FAISS at that recall: queries/s, per CPU-s | vlc / FAISS: wall, CPU | FAISS's fastest at recall <= vlc's: nprobe, recall, queries/s | vlc / that |",
             "|---|---|---|---|---|---|---|---|---|"]
    fmt = lambda v, f: "–" if v is None else format(v, f)
    for r in v["runs"]:
        lines.append(f"| vlc | {r['nprobe']} | {r['recall_at_10']:.3f} | {r['queries_per_second']:,.0f} | {r['queries_per_cpu_second']:,.0f} | "
                     f"{fmt(r['faiss_qps_at_equal_recall'], ',.0f')}, {fmt(r['faiss_queries_per_cpu_second_at_equal_recall'], ',.0f')} | "
                     f"{fmt(r['speed_vs_faiss'], '.2f')}, {fmt(r['cpu_efficiency_vs_faiss'], '.2f')} | "
                     + (f"{b['nprobe']}, {b['recall_at_10']:.3f}, {b['queries_per_second']:,.0f} | {r['speed_vs_faiss_fastest_at_lower_or_equal_recall']:.2f} |"
                        if (b := r.get("faiss_fastest_at_lower_or_equal_recall")) else "– | – |"))
    for r in fz["runs"]:
        lines.append(f"| FAISS | {r['nprobe']} | {r['recall_at_10']:.3f} | {r['queries_per_second']:,.0f} | {r['queries_per_cpu_second']:,.0f} | | | | |")
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
