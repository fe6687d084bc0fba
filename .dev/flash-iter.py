# Flash-KMeans (the peers folder's flash_kmeans, svg-project/flash-kmeans 3f1ea6b) on a large .npy:
# load time, then ms per Lloyd iteration in fp16 (and fp32 when it fits), m random rows as the
# init, without flash_peer.py's exact-assignment check (its n x m chunks do not fit at m 65,536).
# Usage: python3 .dev/flash-iter.py data.npy M ITERS PEERS_DIR
import sys, time, json, numpy as np, torch
path, m, iters, peers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, peers)
from flash_kmeans import batch_kmeans_Euclid
t0 = time.perf_counter()
x16 = torch.from_numpy(np.load(path, mmap_mode='r')[:]).cuda()
torch.cuda.synchronize(); load_s = time.perf_counter() - t0
n, d = x16.shape
init = x16[torch.randperm(n, generator=torch.Generator().manual_seed(1234))[:m].cuda()].clone()
out = {'n': n, 'd': d, 'm': m, 'load_s': round(load_s, 3)}
for name in ['fp16', 'fp32']:
    try:
        x = (x16 if name == 'fp16' else x16.float())[None]; c0 = init.to(x.dtype)[None]
        def run(k):
            torch.cuda.synchronize(); t = time.perf_counter()
            batch_kmeans_Euclid(x, m, max_iters=k, tol=-1.0, init_centroids=c0.clone())
            torch.cuda.synchronize(); return time.perf_counter() - t
        run(1)  # Triton compile
        t1, tk = run(1), run(1 + iters)
        out[f'{name}_iter_ms'] = round((tk - t1) / iters * 1000, 2)
        del x
    except torch.cuda.OutOfMemoryError as e:
        out[f'{name}_iter_ms'] = f'out of memory: {str(e)[:120]}'
    torch.cuda.empty_cache()
print(json.dumps(out))
