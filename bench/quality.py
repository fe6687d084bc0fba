"""Quality: vlc's final energy vs scikit-learn KMeans(n_init=5, max_iter=300, init='k-means++')
at the same m, on the three datasets of bench/datasets.py (seed-large, gm, digits).

vlc runs with its defaults on the CPU backend, end to end through `node bin/vlc.js compress
--device cpu --json` (bench/quality-run.mjs, calling dist/ directly, when there is no CLI); energy = mean squared distance of each vector to its anchor (sklearn's
inertia_ / n). Extra vlc seeds (--seeds) show the spread; the table's ratio uses the default seed.

Usage: /usr/bin/python3 bench/quality.py [--seeds 1234,1,2] [--out bench/results/quality.json]
Needs: npx tsc -p . (dist/), numpy, scikit-learn.
"""
import argparse, datetime, json, os, platform, subprocess, sys, tempfile, time

import numpy as np
from sklearn.cluster import KMeans

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from datasets import DATASETS  # noqa: E402


def run_vlc(npy, m, seed):
    """vlc end to end through its CLI (`vlc compress --json`), or dist/ directly if no CLI."""
    root = os.path.dirname(HERE)
    cli = os.path.join(root, "bin", "vlc.js")
    if os.path.exists(cli):
        out_vlc = npy + f".{seed}.vlc"
        out = subprocess.run(["node", cli, "compress", npy, "-o", out_vlc, "--device", "cpu", "--anchors", str(m),
                              "--seed", str(seed), "--json"], check=True, capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        return {"energy": r["energy"], "seconds": r["seconds"], "iterations": r["iterations"],
                "converged": r["converged"], "via": "vlc compress --device cpu --json"}
    out = subprocess.run(["node", os.path.join(HERE, "quality-run.mjs"), npy, "--m", str(m),
                          "--config", json.dumps({"seed": seed})],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    r["via"] = "bench/quality-run.mjs"
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1234", help="vlc seeds, comma-separated; the first is the default")
    ap.add_argument("--only", default="", help="comma-separated dataset names")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "quality.json"))
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    names = a.only.split(",") if a.only else list(DATASETS)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            make, m = DATASETS[name]
            x = make()
            npy = os.path.join(tmp, name + ".npy")
            np.save(npy, x)
            x32 = x.astype(np.float32)
            t = time.perf_counter()
            km = KMeans(n_clusters=m, n_init=5, max_iter=300, init="k-means++", random_state=0).fit(x32)
            sk_s = time.perf_counter() - t
            sk = float(km.inertia_) / len(x32)
            vlc = [run_vlc(npy, m, s) for s in seeds]
            row = {"dataset": name, "n": int(x.shape[0]), "d": int(x.shape[1]), "m": m,
                   "sklearn": {"energy": sk, "seconds": sk_s, "n_iter_best": int(km.n_iter_)},
                   "vlc": [{"seed": s, "energy": r["energy"], "seconds": r["seconds"], "iterations": r["iterations"],
                            "converged": r["converged"], "via": r["via"]} for s, r in zip(seeds, vlc)],
                   "ratio": vlc[0]["energy"] / sk,
                   "ratioWorstSeed": max(r["energy"] for r in vlc) / sk}
            rows.append(row)
            print(f"{name}: sklearn {sk:.6g} ({sk_s:.1f} s), vlc {vlc[0]['energy']:.6g} ({vlc[0]['seconds']:.1f} s, "
                  f"{vlc[0]['iterations']} it), ratio {row['ratio']:.4f}", file=sys.stderr, flush=True)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "unknown"
    result = {"bench": "quality", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                          "load": os.getloadavg()},
              "commit": commit, "sklearn": "KMeans(n_init=5, max_iter=300, init='k-means++', random_state=0)",
              "vlcConfig": "DEFAULT_CONFIG of src/anneal/config.ts at this commit (seed from --seed)", "rows": rows}
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"{'dataset':<12}{'n x d':>12}{'m':>6}{'sklearn':>12}{'vlc':>12}{'vlc/sk':>9}{'worst seed':>12}")
    for r in rows:
        print(f"{r['dataset']:<12}{str(r['n']) + 'x' + str(r['d']):>12}{r['m']:>6}{r['sklearn']['energy']:>12.6g}"
              f"{r['vlc'][0]['energy']:>12.6g}{r['ratio']:>9.4f}{r['ratioWorstSeed']:>12.4f}")


if __name__ == "__main__":
    main()
