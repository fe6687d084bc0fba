# 50,000,000 x 128 f16 clustered vectors (and 10,000 queries) generated on the GPU, written as .npy
# into /dev/shm: 16,384 centres N(0,1), each point a centre plus N(0, 0.35^2) noise (bench/datasets.py's
# "clustered", at scale). Usage: python3 .dev/r3-data.py N OUT.npy QUERIES.npy
import sys, numpy as np, torch
n, out, qout = int(sys.argv[1]), sys.argv[2], sys.argv[3]
d, k = 128, 16384
g = torch.Generator(device='cuda').manual_seed(1)
C = torch.randn(k, d, generator=g, device='cuda')
mm = np.lib.format.open_memmap(out, mode='w+', dtype=np.float16, shape=(n, d))
step = 1 << 22
for i in range(0, n, step):
    m = min(step, n - i)
    lab = torch.randint(0, k, (m,), generator=g, device='cuda')
    x = C[lab] + 0.35 * torch.randn(m, d, generator=g, device='cuda')
    mm[i:i + m] = x.half().cpu().numpy()
mm.flush(); del mm
lab = torch.randint(0, k, (10000,), generator=g, device='cuda')
q = (C[lab] + 0.35 * torch.randn(10000, d, generator=g, device='cuda')).half().cpu().numpy()
np.save(qout, q)
print('wrote', out, n, d)
