"""The rate-distortion plot of a bench/rd-peers.py results file, written as SVG directly (no
matplotlib: polylines, log axes, a legend). Left: whole-file bytes/vector against recall@10 (the
vertical axis is log(1 − recall), so 0.9, 0.99 and 0.999 are evenly spaced; the targets 0.90, 0.95,
0.99 dashed). Right: bytes/vector against MSE (log), with the Gaussian reverse-water-filling bound
for the measured residual spectrum (dashed). One polyline a curve (a codec at its budgets).

Usage: python3 bench/rd-svg.py RESULTS.json OUT.svg
"""
import json, math, sys

COLORS = {"vlc ec": "#d62728", "vlc bits": "#1f77b4", "vlc pq": "#17becf", "vlc pq-dims": "#9edae5", "vlc int4": "#aec7e8",
          "vlc int8": "#393b79", "FAISS SQ": "#2ca02c", "FAISS PQ": "#ff7f0e", "FAISS OPQ": "#8c564b", "FAISS IVF-PQ": "#e377c2",
          "LanceDB IVF_RQ": "#9467bd", "vlc none": "#7f7f7f"}
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 460, 360, 62, 14, 30, 46


def _ticks(lo, hi):
    lo, hi = min(lo, hi), max(lo, hi)
    out = []
    steps = (1, 2, 5) if hi / lo > 30 else (1, 1.5, 2, 3, 4, 5, 6, 8)  # a narrow log range gets more ticks
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in steps:
            v = m * 10 ** e
            if lo <= v <= hi:
                out.append(v)
    return out


def _fmt(v):
    return f"{v:g}" if 1e-3 <= abs(v) < 1e5 else f"{v:.0e}"


class Panel:
    def __init__(self, ox, xr, yr, ylog, title, xlabel, ylabel, yticks=None, yfmt=_fmt):
        self.ox, self.xr, self.yr, self.ylog, self.parts = ox, xr, yr, ylog, []
        self.ytick_vals, self.yfmt = yticks, yfmt
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel

    def px(self, x):
        lo, hi = (math.log10(v) for v in self.xr)
        return self.ox + PAD_L + (math.log10(x) - lo) / (hi - lo) * (W - PAD_L - PAD_R)

    def py(self, y):
        lo, hi = self.yr
        f = (math.log10(y) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) if self.ylog else (y - lo) / (hi - lo)
        return PAD_T + (1 - f) * (H - PAD_T - PAD_B)

    def frame(self):
        x0, x1, y0, y1 = self.ox + PAD_L, self.ox + W - PAD_R, PAD_T, H - PAD_B
        p = [f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" stroke="#333"/>',
             f'<text x="{(x0 + x1) / 2}" y="{PAD_T - 10}" text-anchor="middle" font-weight="bold">{self.title}</text>',
             f'<text x="{(x0 + x1) / 2}" y="{H - 8}" text-anchor="middle">{self.xlabel}</text>',
             f'<text transform="translate({self.ox + 14},{(y0 + y1) / 2}) rotate(-90)" text-anchor="middle">{self.ylabel}</text>']
        for v in _ticks(*self.xr):
            x = self.px(v)
            p.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y1}" stroke="#ddd"/><text x="{x:.1f}" y="{y1 + 14}" text-anchor="middle">{_fmt(v)}</text>')
        for v in self.ytick_vals or _ticks(*self.yr):
            y = self.py(v)
            p.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#ddd"/><text x="{x0 - 4}" y="{y + 4:.1f}" text-anchor="end">{self.yfmt(v)}</text>')
        return p

    def line(self, pts, color, dash=None, marks=True):
        pts = [(x, y) for x, y in pts if self.xr[0] <= x <= self.xr[1] and min(self.yr) <= y <= max(self.yr)]
        if not pts:
            return
        d = " ".join(f"{self.px(x):.1f},{self.py(y):.1f}" for x, y in pts)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="1.6"{dash_attr}/>')
        if marks:
            self.parts += [f'<circle cx="{self.px(x):.1f}" cy="{self.py(y):.1f}" r="2.6" fill="{color}"/>' for x, y in pts]


def plot(ds):
    rows = [r for r in ds["rows"] if r["curve"] != "vlc none"]
    curves = {}
    for r in sorted(rows, key=lambda r: r["bytes_per_vector"]):
        curves.setdefault(r["curve"], []).append(r)
    bmin = min(r["bytes_per_vector"] for r in rows) / 1.15
    bmax = max(r["bytes_per_vector"] for r in rows) * 1.15
    floor = 1e-3  # log(1 - recall) axis: a recall of 1 is drawn at 0.999
    to_y = lambda rc: max(1 - rc, floor)
    rec_ticks = [0.5, 0.8, 0.9, 0.95, 0.99, 0.995, 0.999]
    worst = min(1.0, max(1 - r["recall_at_10"] for r in rows) * 1.3)
    rec_ticks = [t for t in rec_ticks if 1 - t <= worst]
    left = Panel(0, (bmin, bmax), (worst, floor), True, f"{ds['name']} {ds['n']:,} x {ds['d']}: recall@10", "whole-file bytes / vector", "recall@10",
                 yticks=[1 - t for t in rec_ticks], yfmt=lambda v: f"{1 - v:g}")
    mses = [r["mse"] for r in rows if r["mse"]] + [p["mse"] for p in ds.get("bound_curve", []) if bmin <= p["bytes_per_vector"] <= bmax]
    right = Panel(W, (bmin, bmax), (min(mses) / 1.5, max(mses) * 1.5), True, "MSE (decoded vectors)", "whole-file bytes / vector", "MSE")
    for t in (0.90, 0.95, 0.99):
        left.line([(bmin, to_y(t)), (bmax, to_y(t))], "#999", dash="4,3", marks=False)
    for name, rs in curves.items():
        color = COLORS.get(name, "#000")
        left.line([(r["bytes_per_vector"], to_y(r["recall_at_10"])) for r in rs], color)
        right.line([(r["bytes_per_vector"], r["mse"]) for r in rs if r["mse"]], color)
    if ds.get("bound_curve"):
        right.line([(p["bytes_per_vector"], p["mse"]) for p in ds["bound_curve"] if p["mse"] > 0], "#000", dash="6,3", marks=False)
    legend = list(curves) + (["bound (reverse water-filling)"] if ds.get("bound_curve") else [])
    lh = 16
    total_h = H + 10 + lh * math.ceil(len(legend) / 4)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * W}" height="{total_h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{2 * W}" height="{total_h}" fill="white"/>']
    for p in (left, right):
        out += p.frame() + p.parts
    for i, name in enumerate(legend):
        x, y = 20 + (i % 4) * (2 * W - 40) / 4, H + 10 + lh * (i // 4) + 6
        color = COLORS.get(name, "#000")
        dash = ' stroke-dasharray="6,3"' if name.startswith("bound") else ""
        out.append(f'<line x1="{x}" y1="{y}" x2="{x + 22}" y2="{y}" stroke="{color}" stroke-width="2"{dash}/><text x="{x + 28}" y="{y + 4}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def plot_file(src, dst):
    with open(src) as f:
        ds = json.load(f)
    with open(dst, "w") as f:
        f.write(plot(ds))


if __name__ == "__main__":
    plot_file(sys.argv[1], sys.argv[2])
