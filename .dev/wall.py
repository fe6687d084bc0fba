# Runs a vlc command with --json: its stdout to OUT.json, its stderr (timestamped like ts.py) to OUT.err,
# and prints one line: the process's wall from spawn to exit, when its JSON line arrived, how long it
# lived after that (the exit), total_seconds, and how far the phases (start included) are from the wall.
# Usage: python3 .dev/wall.py OUT TAG cmd args...
import json, subprocess, sys, threading, time
out, tag, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t0 = time.time()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
def stamp():
    with open(out + '.err', 'w') as f:
        for line in p.stderr:
            f.write(f'{time.time() - t0:8.3f} {line.decode(errors="replace")}')
th = threading.Thread(target=stamp); th.start()
line = p.stdout.readline(); t1 = time.time()
rest = p.stdout.read(); p.wait(); t2 = time.time()
th.join() # stderr ends with the process: every line written
open(out + '.json', 'wb').write(line + rest)
try:
    d = json.loads(line)
except ValueError:
    print(f'{tag} rc {p.returncode} wall {t2 - t0:.3f}: no JSON'); sys.exit(1)
ph = d['phases']; s = sum(ph.values()); wall = t2 - t0
print(f"{tag} rc {p.returncode} wall {wall:.3f} json_at {t1 - t0:.3f} after_json {t2 - t1:.3f} total_seconds {d['total_seconds']:.3f} "
      f"phases_sum {s:.3f} unaccounted {wall - s:.3f} ({100 * (wall - s) / wall:.1f} % of the wall) codec {d['codec']} bytes {d['bytes']}")
print(f"{tag} phases " + ', '.join(f'{k} {v:.3f}' for k, v in ph.items()))
