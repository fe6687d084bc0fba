# How fast host memory becomes page-locked (cudaHostRegister) and how fast it crosses to the GPU
# from pageable vs registered memory, on 1 and all GPUs at once: decides how vlc uploads its rows.
import time, torch, sys, json
GB = float(sys.argv[1]) if len(sys.argv) > 1 else 12.8
n = int(GB * 1e9) // 2
x = torch.empty(n, dtype=torch.float16); x.fill_(1.0)  # touched, like rows read from a file
cr = torch.cuda.cudart(); res = {'GB': GB, 'gpus': torch.cuda.device_count()}
def t(f):
    torch.cuda.synchronize(); t0 = time.perf_counter(); f(); [torch.cuda.synchronize(i) for i in range(torch.cuda.device_count())]; return time.perf_counter() - t0
dev = [torch.empty(n // torch.cuda.device_count() + 1, dtype=torch.float16, device=f'cuda:{i}') for i in range(torch.cuda.device_count())]
part = n // len(dev)
res['pageable_1gpu_s'] = t(lambda: dev[0][:part].copy_(x[:part]))  # 1/G of the data to one GPU
res['pageable_1gpu_part_GB'] = part * 2 / 1e9
ptr = x.data_ptr(); nbytes = n * 2
t0 = time.perf_counter(); rc = cr.cudaHostRegister(ptr, nbytes, 1); res['register_s'] = time.perf_counter() - t0; res['register_rc'] = int(rc)
res['pinned_1gpu_part_s'] = t(lambda: dev[0][:part].copy_(x[:part], non_blocking=True))
def all_gpus():
    for i, dv in enumerate(dev):
        with torch.cuda.device(i): dv[:part].copy_(x[i * part:(i + 1) * part], non_blocking=True)
res['pinned_all_gpus_s'] = t(all_gpus)
t0 = time.perf_counter(); cr.cudaHostUnregister(ptr); res['unregister_s'] = time.perf_counter() - t0
# chunked register: 256 MB at a time (what a pipelined upload would do)
t0 = time.perf_counter(); CH = 256 << 20
for off in range(0, nbytes - CH, CH): cr.cudaHostRegister(ptr + off, CH, 1)
res['register_chunks_s'] = time.perf_counter() - t0
t0 = time.perf_counter()
for off in range(0, nbytes - CH, CH): cr.cudaHostUnregister(ptr + off)
res['unregister_chunks_s'] = time.perf_counter() - t0
# memcpy into a pinned staging buffer (the alternative: staging chunks)
st = torch.empty(CH // 2, dtype=torch.float16).pin_memory()
t0 = time.perf_counter()
for off in range(0, n - CH // 2, CH // 2): st.copy_(x[off:off + CH // 2])
res['memcpy_to_staging_GBps'] = nbytes / 1e9 / (time.perf_counter() - t0)
print(json.dumps(res))
