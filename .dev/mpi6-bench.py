# Issue 31 / mpi6 on the CPU box: one process against `mpirun -n 2` of the base commit and of this
# branch, interleaved (one, base, branch; again), the same input and options; wall and user+sys CPU
# of the whole command (/usr/bin/time: mpirun waits for its ranks, so their CPU is counted), rank 0's
# --json phases and -v lines (timestamped), the output's sha256. Usage:
#   python3 .dev/mpi6-bench.py BASE_ROOT BRANCH_ROOT INPUT.npy OUT.json REPS
import hashlib, json, os, subprocess, sys, time
base, branch, inp, out, reps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
work = os.path.dirname(os.path.abspath(out)) if False else '/tmp/mpi6/bench'
os.makedirs(work, exist_ok=True)
configs = {
    'int8': ['--anchors', '256', '--iters', '3', '--residual', 'int8'],
    'bits': ['--anchors', '256', '--iters', '3', '--residual', 'bits'],
}
variants = {
    'one': (branch, False),
    'mpi2-base': (base, True),
    'mpi2-branch': (branch, True),
}
def run(tag, root, mpi, extra):
    o = f'{work}/{tag}.vlc'
    if os.path.exists(o): os.remove(o)
    cmd = ['nice', '-n', '10', '/usr/bin/time', '-f', '%e %U %S', '-o', f'{work}/{tag}.time']
    if mpi: cmd += ['mpirun', '-n', '2', '--allow-run-as-root', '--oversubscribe']
    cmd += ['node', f'{root}/bin/vlc.js', 'compress', inp, '-o', o, '--device', 'cpu', '--json', '-v'] + (['--distributed'] if mpi else []) + extra
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in p.stderr: lines.append(f'{time.time() - t0:8.3f} {line}')
    stdout = p.stdout.read(); p.wait()
    open(f'{work}/{tag}.err', 'w').write(''.join(lines))
    wall, user, sys_ = map(float, open(f'{work}/{tag}.time').read().split()[-3:])
    js = json.loads(stdout.strip().splitlines()[-1])
    sha = hashlib.sha256(open(o, 'rb').read()).hexdigest()
    os.remove(o)
    debug = [l.strip() for l in lines if any(k in l for k in ('gathered', 'bytes of .vlc', 'quality:', 'on cores'))]
    return {'rc': p.returncode, 'wall_s': wall, 'cpu_s': round(user + sys_, 2), 'user_s': user, 'sys_s': sys_,
            'phases': {k: round(v, 3) for k, v in js['phases'].items()}, 'total_seconds': round(js['total_seconds'], 3), 'sha256': sha, 'debug': debug}
results = {c: {v: [] for v in variants} for c in configs}
for rep in range(reps):
    for c, extra in configs.items():
        for v, (root, mpi) in variants.items():
            r = run(f'{c}-{v}-{rep}', root, mpi, extra)
            results[c][v].append(r)
            print(c, v, rep, r['wall_s'], r['cpu_s'], r['phases'], r['sha256'][:16], flush=True)
json.dump(results, open(out, 'w'), indent=1)
