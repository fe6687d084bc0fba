"""Merges bench/ec-rd.py result files into one table: for each data set, the union of their rows
(a row of a later file replaces an earlier one of the same method; each row keeps the commit and
file it came from), and for each recall@10 target the smallest measured whole file per family and
the interpolated bytes (ec-rd.py's rule), ec against the smallest fixed-rate vlc file.

Usage: /usr/bin/python3 bench/ec-rd-merge.py OUT.json IN1.json [IN2.json ...]
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util

spec = importlib.util.spec_from_file_location("ecrd", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ec-rd.py"))
ecrd = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ecrd)

out, ins = sys.argv[1], sys.argv[2:]
merged = {"machine": "2-core CPU (shared, loaded)", "sources": [], "datasets": {}}
for path in ins:
    r = json.load(open(path))
    merged["sources"].append({"file": os.path.basename(path), "commit": r.get("commit"), "date": r.get("date"), "command": r.get("command")})
    for name, ds in r["datasets"].items():
        m = merged["datasets"].setdefault(name, {"n": ds["n"], "d": ds["d"], "rows": {}})
        for row in ds["rows"]:
            m["rows"][row["method"]] = {**row, "commit": r.get("commit"), "file": os.path.basename(path)}
for name, m in merged["datasets"].items():
    rows = sorted(m["rows"].values(), key=lambda r: (r["family"], r["bytes_per_vector"]))
    m["rows"] = rows
    targets = {}
    for t in ecrd.TARGETS:
        best = {}
        for row in rows:
            if row["recall_at_10"] >= t and (row["family"] not in best or row["bytes_per_vector"] < best[row["family"]]["bytes_per_vector"]):
                best[row["family"]] = row
        fixed, ec = best.get("vlc fixed-rate"), best.get("vlc ec")
        fi, ei = ecrd.interpolated(rows, "vlc fixed-rate", t), ecrd.interpolated(rows, "vlc ec", t)
        targets[str(t)] = {
            "smallest": {f: {"method": b["method"], "bytes_per_vector": b["bytes_per_vector"], "recall_at_10": b["recall_at_10"]} for f, b in sorted(best.items())},
            "ec_vs_fixed_rate": (ec["bytes_per_vector"] / fixed["bytes_per_vector"] - 1) if ec and fixed else None,
            "interpolated_bytes": {"vlc fixed-rate": fi, "vlc ec": ei},
            "ec_vs_fixed_rate_interpolated": (ei / fi - 1) if fi and ei else None,
        }
    m["targets"] = targets
json.dump(merged, open(out, "w"), indent=1)
for name, m in merged["datasets"].items():
    for t, v in m["targets"].items():
        print(name, t, json.dumps(v))
