"""What an entropy-coded file can attain at the recall of vlc's smallest fixed-rate file (issue 28's
"25 % smaller" target), before any codec is built: for each recall@10 target, the smallest fixed-rate
vlc file reaching it (measured, and interpolated on its curve), its MSE and its fixed costs (the
anchors-only file: anchors, ids, headers), and the whole-file bytes that
  (i)  an ideal entropy-coded uniform scalar quantizer (ECSQ) needs at the same MSE: one step Δ on
       every coded component, codes costing exactly their entropy, centroid reconstruction, no model
       bytes — computed twice: for Gaussian components with the residual's covariance eigenvalues,
       and on the measured residuals themselves (each axis quantized at Δ, its codes' empirical
       entropy over all n rows: what ec's coder costs with free models);
  (ii) the Shannon bound needs at the same MSE: reverse water-filling on the eigenvalues (the least
       rate of a Gaussian source with that spectrum; Gaussian is the hardest source of a given
       covariance, so a non-Gaussian residual could in principle go lower);
each plus the same fixed costs. The fraction each saves against the fixed-rate file says whether the
target (−25 %) is reachable at equal MSE at all.

Equal recall is read as equal MSE: both vlc curves reach a recall at about the same MSE (the table
prints ec's MSE at each target beside the fixed-rate one's).

Inputs: a bench/rd-peers.py results file (rows, residual_eigenvalues), optionally more vlc rows from
bench/rate-distortion.mjs (--rows, its stdout JSON: the same data, anchors, queries) and the residual
it wrote (--residual R.f32, n × d f32: x − anchor) for the empirical ECSQ.

Usage: /usr/bin/python3 bench/ec-attainable.py bench/results/2026-11-28-rd-peers-gm100k.json
         [--rows more.json] [--residual r.f32] [--out bench/results/DATE-ec-attainable-gm100k.json]
"""
import argparse, datetime, importlib.util, json, math, os, platform, subprocess, sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = (0.90, 0.95, 0.99)
FIXED = ("vlc bits", "vlc int4", "vlc int8", "vlc pq")


def curve(method):
    for c in ("vlc ec", "vlc bits", "vlc int4", "vlc int8", "vlc pq", "vlc none"):
        if method.startswith(c):
            return c
    return None


def envelope(rows, c):
    """The curve's points by bytes, made monotone in recall (as rd-peers.py's interpolation)."""
    pts = sorted((r["bytes_per_vector"], r["recall_at_10"], r["mse"]) for r in rows if curve(r["method"]) == c)
    env, best = [], (-1.0, None)
    for b, rc, mse in pts:
        if rc > best[0]:
            best = (rc, mse)
        env.append((b, best[0], best[1]))
    return env


def at_recall(env, t):
    """(bytes, MSE) at recall t: linear in log(1 − recall), the MSE's log likewise; None outside."""
    for (b0, r0, m0), (b1, r1, m1) in zip(env, env[1:]):
        if r0 < t <= r1:
            if r1 >= 1 or r1 == r0:
                return b1, m1
            f = (math.log(1 - t) - math.log(1 - r0)) / (math.log(1 - r1) - math.log(1 - r0))
            return b0 + (b1 - b0) * f, math.exp(math.log(m0) + (math.log(m1) - math.log(m0)) * f)
    if env and env[0][1] >= t:
        return env[0][0], env[0][2]
    return None


def _load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


water_filling_bits = _load("ecrd", "ec-rd.py").water_filling_bits


def bits_at_mse(point, D, lo, hi, iters):
    """point(step) -> (bits, MSE) at the largest step whose MSE is at most D: bisection on log step in [lo, hi]."""
    for _ in range(iters):
        mid = (lo + hi) / 2
        if point(math.exp(mid))[1] > D:
            hi = mid
        else:
            lo = mid
    return point(math.exp(lo))[0]


_erf = np.frompyfunc(math.erf, 1, 1)


def gaussian_ecsq(delta):
    """A unit Gaussian quantized at step delta (cells centred on multiples of delta), centroid
    reconstruction: (entropy in bits, MSE)."""
    J = int(math.ceil(9 / delta)) + 1
    edges = (np.arange(-J, J + 2) - 0.5) * delta
    Phi = 0.5 * (1 + _erf(edges / math.sqrt(2)).astype(float))
    phi = np.exp(-edges ** 2 / 2) / math.sqrt(2 * math.pi)
    a, b = slice(0, -1), slice(1, None)
    p = Phi[b] - Phi[a]
    m1 = phi[a] - phi[b]
    m2 = p + edges[a] * phi[a] - edges[b] * phi[b]
    ok = p > 1e-300
    return float(-(p[ok] * np.log2(p[ok])).sum()), float((m2[ok] - m1[ok] ** 2 / p[ok]).sum())


def ecsq_gaussian_bits(lam, D):
    """Bits a vector of ideal ECSQ on Gaussian components of variances lam at total MSE D: one step
    for all, a component left uncoded (its variance its error) where coding it saves less error per
    bit than the others' slope (steps.ts's rule, in closed form)."""
    def point(step):
        bits = mse = 0.0
        slope = 2 * math.log(2) * step * step / 12
        for v in lam:
            h, dn = gaussian_ecsq(step / math.sqrt(v))
            if h > 0 and v - dn * v > slope * h:
                bits, mse = bits + h, mse + dn * v
            else:
                mse += v
        return bits, mse
    return bits_at_mse(point, D, math.log(math.sqrt(12 * D / len(lam)) / 8), math.log(math.sqrt(12 * lam.max()) * 4), 50)


def ecsq_measured_bits(r, D):
    """Bits a vector of ideal ECSQ on the measured residual r (n × d), along its axes: one step,
    per axis the offset toward 0 of ec's decoder (residuals.ts), codes at their empirical entropy
    over all rows; a target MSE met by bisection on the step (all axes coded: the spectrum is flat)."""
    n, d = r.shape

    def point(step):
        bits = mse = 0.0
        for k in range(d):
            x = r[:, k]
            q = np.rint(x / step)
            e = x - step * q
            nz = q != 0
            se = np.where(q[nz] > 0, -e[nz], e[nz]).sum()  # Σ sgn(q)·(step·q − x)
            c = min(step / 2, max(0.0, se / max(1, nz.sum())))
            rec = step * q - np.sign(q) * c
            mse += float(((x - rec) ** 2).sum()) / n
            qi = q.astype(np.int64)
            cnt = np.bincount(qi - qi.min())
            p = cnt[cnt > 0] / n
            bits += float(-(p * np.log2(p)).sum())
        return bits, mse
    return bits_at_mse(point, D, math.log(math.sqrt(12 * D / d) / 4), math.log(math.sqrt(12 * D / d) * 4), 30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--rows", default=None, help="bench/rate-distortion.mjs output with more vlc rows (same data and queries)")
    ap.add_argument("--residual", default=None, help="x − anchor, n × d raw f32, for the measured ECSQ")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    ds = json.load(open(a.results))
    d, n = ds["d"], ds["n"]
    rows = [r for r in ds["rows"] if r["method"].startswith("vlc") and r.get("mse") is not None]
    extra = json.load(open(a.rows))["rows"] if a.rows else []
    have = {r["method"] for r in rows}
    rows += [{**r, "source": os.path.basename(a.rows)} for r in extra if r["method"] not in have]
    lam = np.clip(np.array(ds["residual_eigenvalues"]), 0, None)
    none = next(r for r in rows if r["method"] == "vlc none")
    fixed_costs = none["bytes_per_vector"]
    resid = np.fromfile(a.residual, dtype=np.float32).reshape(n, d).astype(np.float64) if a.residual else None
    out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout.strip(),
           "machine": f"{os.cpu_count()}-core CPU (shared)", "host": platform.node(),
           "command": " ".join(["bench/ec-attainable.py"] + sys.argv[1:]), "data": ds["name"], "n": n, "d": d,
           "fixed_costs_bytes_per_vector": fixed_costs, "fixed_costs_what": "the anchors-only file (vlc none): anchors (f16), ids, manifest, headers, / n",
           "residual_energy": float(lam.sum()), "targets": {}}
    for t in TARGETS:
        entry = {}
        ec = at_recall(envelope(rows, "vlc ec"), t)
        cands = {c: at_recall(envelope(rows, c), t) for c in FIXED}
        cands = {c: v for c, v in cands.items() if v}
        hit = [r for r in rows if curve(r["method"]) in FIXED and r["recall_at_10"] >= t]
        if not cands:
            top = max((r for r in rows if curve(r["method"]) in FIXED), key=lambda r: r["recall_at_10"])
            entry["fixed_rate"] = None
            entry["best_fixed_rate"] = {k: top[k] for k in ("method", "bytes_per_vector", "mse", "recall_at_10")}
            entry["ec_interpolated"] = {"bytes": ec[0], "mse": ec[1]} if ec else None
            entry["conclusion"] = (f"no fixed-rate vlc file measured reaches recall {t} (the best: {top['method']}, recall {top['recall_at_10']:.4f} at "
                                   f"{top['bytes_per_vector']:.1f} B)" + (f"; ec reaches it at {ec[0]:.1f} B" if ec else "") + ": no comparison at this target")
            out["targets"][str(t)] = entry
            continue
        best = min(cands, key=lambda c: cands[c][0])
        small = min(hit, key=lambda r: r["bytes_per_vector"])
        for label, (B, D) in (("interpolated", cands[best]), ("smallest_measured", (small["bytes_per_vector"], small["mse"]))):
            R = water_filling_bits(lam, D)
            g = ecsq_gaussian_bits(lam, D)
            e = {"fixed_rate_bytes": B, "mse": D, "fixed_rate_residual_bits_per_dim": 8 * (B - fixed_costs) / d,
                 "bound_bytes": fixed_costs + R / 8, "bound_bits_per_dim": R / d,
                 "ecsq_gaussian_bytes": fixed_costs + g / 8, "ecsq_gaussian_bits_per_dim": g / d,
                 "target_bytes_minus_25pct": 0.75 * B}
            if resid is not None:
                m = ecsq_measured_bits(resid, D)
                e.update({"ecsq_measured_bytes": fixed_costs + m / 8, "ecsq_measured_bits_per_dim": m / d})
            for k in ("bound", "ecsq_gaussian", "ecsq_measured"):
                if f"{k}_bytes" in e:
                    e[f"{k}_vs_fixed_rate"] = e[f"{k}_bytes"] / B - 1
            e["bound_reaches_minus_25pct"] = e["bound_bytes"] <= 0.75 * B
            if label == "smallest_measured":
                e["method"], e["recall_at_10"] = small["method"], small["recall_at_10"]
            else:
                e["curve"] = best
            entry[label] = e
        entry["ec_interpolated"] = {"bytes": ec[0], "mse": ec[1], "vs_fixed_rate": ec[0] / cands[best][0] - 1} if ec else None
        i = entry["interpolated"]
        entry["conclusion"] = (
            f"at the fixed-rate file's MSE {i['mse']:.3g} ({i['fixed_rate_bytes']:.2f} B, {best} interpolated at recall {t}; fixed costs {fixed_costs:.2f} B), "
            f"the Gaussian rate-distortion bound needs {i['bound_bytes']:.2f} B ({100 * i['bound_vs_fixed_rate']:+.1f} %) and an ideal ECSQ "
            f"{i['ecsq_gaussian_bytes']:.2f} B ({100 * i['ecsq_gaussian_vs_fixed_rate']:+.1f} %)"
            + (f", {i['ecsq_measured_bytes']:.2f} B on the measured residual ({100 * i['ecsq_measured_vs_fixed_rate']:+.1f} %)" if "ecsq_measured_bytes" in i else "")
            + f"; -25 % is {i['target_bytes_minus_25pct']:.2f} B: "
            + ("within the bound" if i["bound_reaches_minus_25pct"] else f"{i['bound_bytes'] - i['target_bytes_minus_25pct']:.2f} B below the bound: no codec reaches it at equal MSE"))
        out["targets"][str(t)] = entry
        print(f"recall {t}: fixed-rate {best} {i['fixed_rate_bytes']:.2f} B (MSE {i['mse']:.3g}); bound {i['bound_bytes']:.2f} ({100 * i['bound_vs_fixed_rate']:+.1f} %), "
              f"ECSQ gaussian {i['ecsq_gaussian_bytes']:.2f} ({100 * i['ecsq_gaussian_vs_fixed_rate']:+.1f} %)"
              + (f", ECSQ measured {i['ecsq_measured_bytes']:.2f} ({100 * i['ecsq_measured_vs_fixed_rate']:+.1f} %)" if "ecsq_measured_bytes" in i else "")
              + (f"; ec {ec[0]:.2f} (MSE {ec[1]:.3g}, {100 * (ec[0] / i['fixed_rate_bytes'] - 1):+.1f} %)" if ec else ""), file=sys.stderr)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)
    else:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
