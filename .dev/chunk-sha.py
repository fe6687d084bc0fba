#!/usr/bin/env python3
# sha256 of a large file in K equal chunks on K threads (hashlib releases the GIL), then the sha256
# of the chunks' hex digests joined: two files are the same bytes when their lines are equal.
# Usage: python3 .dev/chunk-sha.py FILE [K=32]  -> prints "size S chunks K combined HEX"
import hashlib, os, sys, threading
path, k = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 32
size = os.path.getsize(path)
per = -(-size // k)
out = [None] * k
def work(i):
    fd = os.open(path, os.O_RDONLY)
    h = hashlib.sha256()
    at, end = i * per, min(size, (i + 1) * per)
    while at < end:
        b = os.pread(fd, min(64 << 20, end - at), at)
        if not b: raise IOError(f'{path} ended at {at}')
        h.update(b); at += len(b)
    os.close(fd)
    out[i] = h.hexdigest()
ts = [threading.Thread(target=work, args=(i,)) for i in range(k)]
for t in ts: t.start()
for t in ts: t.join()
print('size', size, 'chunks', k, 'combined', hashlib.sha256(''.join(out).encode()).hexdigest())
