# Sharded clustered f16 vectors for the billion run (.dev/r5-bill31.sh gen): the cluster model of
# .dev/r3-data.py (16,384 centres N(0,1) drawn from seed 1; each point a centre plus N(0, 0.35^2)
# noise), written as .npy shards of ROWS rows each, shard k's labels and noise from seed 1000 + k,
# so that any worker can make any shard. This process makes shards FIRST, FIRST + STEP, ... < COUNT
# on GPU G. Usage: python3 .dev/r5-shards.py DIR COUNT ROWS FIRST STEP G
import os, sys, numpy as np, torch
out, count, rows, first, step, gpu = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
d, k = 128, 16384
dev = f'cuda:{gpu}'
C = torch.randn(k, d, generator=torch.Generator(device=dev).manual_seed(1), device=dev)
piece = 1 << 22
for s in range(first, count, step):
    g = torch.Generator(device=dev).manual_seed(1000 + s)
    path = os.path.join(out, f'part-{s:04d}.npy')
    mm = np.lib.format.open_memmap(path + '.tmp', mode='w+', dtype=np.float16, shape=(rows, d))
    for i in range(0, rows, piece):
        m = min(piece, rows - i)
        lab = torch.randint(0, k, (m,), generator=g, device=dev)
        mm[i:i + m] = (C[lab] + 0.35 * torch.randn(m, d, generator=g, device=dev)).half().cpu().numpy()
    mm.flush(); del mm
    os.rename(path + '.tmp', path)  # a shard is whole or absent
if first == 0:
    g = torch.Generator(device=dev).manual_seed(7)
    lab = torch.randint(0, k, (10000,), generator=g, device=dev)
    np.save(os.path.join(os.path.dirname(out.rstrip('/')), 'q.npy'), (C[lab] + 0.35 * torch.randn(10000, d, generator=g, device=dev)).half().cpu().numpy())
