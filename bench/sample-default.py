"""How many training rows per anchor --sample needs: vlc compress on the CPU with --sample at
several rows per anchor and with every row (--sample all), on synthetic data sets where n is many
times 256 per anchor. Reports the final energy (over ALL n rows: the exact final pass), its excess
over training on every row, iterations, and wall and CPU seconds. Writes bench/results/sample.json.

  gm:    a mixture of 300 Gaussians (centres N(0,1), noise sd 0.3) on the unit sphere (datasets.py's gm)
  aniso: Gaussian with a decaying spectrum (sd of dim j = 1/sqrt(j+1)), like embeddings' PCA spectra
  unif:  uniform in the cube [0,1]^d: no cluster structure at all

Usage: python3 bench/sample-default.py [--quick] (needs dist/: npm run build). CPU only, no peers.
"""
import json, os, subprocess, sys, tempfile, time
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from datasets import gm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VLC = ['node', os.path.join(ROOT, 'bin', 'vlc.js')]


def aniso(n, d, seed=7):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)) / np.sqrt(np.arange(1, d + 1))).astype(np.float32)


def unif(n, d, seed=9):
    return np.random.default_rng(seed).random((n, d), dtype=np.float32)


def run(path, m, sample, seed):
    out = path + '.vlc'
    cmd = VLC + ['compress', path, '-o', out, '-f', '--device', 'cpu', '--anchors', str(m), '--sample', sample, '--seed', str(seed), '--json', '-q']
    t = time.time()
    p = subprocess.run(['/usr/bin/time', '-f', '%U %S'] + cmd, capture_output=True, text=True)
    wall = time.time() - t
    if p.returncode != 0:
        raise SystemExit(f'{" ".join(cmd)} failed: {p.stderr}')
    r = json.loads(p.stdout)
    user, sys_ = map(float, p.stderr.strip().split('\n')[-1].split())
    return {'sample': sample, 'seed': seed, 'sample_rows': r['sample_rows'], 'energy': r['energy'], 'train_energy': r['train_energy'],
            'iterations': r['iterations'], 'seconds': r['seconds'], 'final_pass_seconds': r['final_pass_seconds'],
            'wall_seconds': wall, 'cpu_seconds': user + sys_}


def main():
    quick = '--quick' in sys.argv
    sets = [('gm', lambda: gm(n=100_000, d=64), 128), ('aniso', lambda: aniso(100_000, 96), 128), ('unif', lambda: unif(100_000, 32), 128)]
    per_anchor = [32, 64, 128, 256, 512]
    seeds = [1] if quick else [1, 2]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, make, m in sets:
            x = make()
            path = os.path.join(tmp, f'{name}.npy')
            np.save(path, x)
            for seed in seeds:
                full = run(path, m, 'all', seed)
                runs = [full] + [run(path, m, str(k * m), seed) for k in per_anchor if k * m < x.shape[0]]
                for r in runs:
                    r['excess'] = r['energy'] / full['energy'] - 1
                    r['per_anchor'] = r['sample_rows'] / m
                    print(json.dumps({'dataset': name, **r}), flush=True)
                rows.append({'dataset': name, 'n': x.shape[0], 'd': x.shape[1], 'm': m, 'seed': seed, 'runs': runs})
    out = {'bench': 'sample-default', 'date': time.strftime('%Y-%m-%dT%H:%M:%S%z'), 'commit': subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True, cwd=ROOT).stdout.strip(),
           'machine': {'cores': os.cpu_count(), 'load': os.getloadavg()},
           'note': 'energy: mean squared distance of every row to its anchor after the exact final pass; excess: energy / energy(--sample all) - 1; wall seconds are noisy on a shared machine, cpu_seconds = user + sys of the process',
           'rows': rows}
    with open(os.path.join(ROOT, 'bench', 'results', 'sample.json'), 'w') as f:
        json.dump(out, f, indent=1)


if __name__ == '__main__':
    main()
