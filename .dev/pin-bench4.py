# Uploads to all GPUs of one host: which way of locking host memory lets 4 GPUs copy at once?
# 12.8 GB of f16 (touched) split in 4 slices, one per GPU: (a) pageable copies one after another;
# (b) one PORTABLE lock of the whole, 4 async copies at once; (c) each GPU locks its slice for its
# own context (flags 0), then 4 async copies at once; (d) as vlc's pin.ts: 256 MiB pieces, GPUs
# taking turns, each piece locked (flags 0) then copied asynchronously.
import time, torch, sys, json
GB = float(sys.argv[1]) if len(sys.argv) > 1 else 12.8
G = torch.cuda.device_count(); n = int(GB * 1e9) // 2 // G * G; part = n // G
x = torch.empty(n, dtype=torch.float16); x.fill_(1.0)
cr = torch.cuda.cudart(); ptr = x.data_ptr(); res = {'GB': GB, 'gpus': G}
dev = [torch.empty(part, dtype=torch.float16, device=f'cuda:{i}') for i in range(G)]
def sync():
    for i in range(G): torch.cuda.synchronize(i)
def timed(f):
    sync(); t0 = time.perf_counter(); f(); sync(); return round(time.perf_counter() - t0, 3)
def copies():
    for i in range(G):
        with torch.cuda.device(i): dev[i].copy_(x[i * part:(i + 1) * part], non_blocking=True)
res['a_pageable_serial_s'] = timed(copies)
def b():
    cr.cudaHostRegister(ptr, n * 2, 1); copies(); sync(); cr.cudaHostUnregister(ptr)
res['b_portable_whole_s'] = timed(b)
t0 = time.perf_counter(); cr.cudaHostRegister(ptr, n * 2, 1); res['b_register_only_s'] = round(time.perf_counter() - t0, 3)
res['b_copy_only_s'] = timed(copies)
t0 = time.perf_counter(); cr.cudaHostUnregister(ptr); res['b_unregister_only_s'] = round(time.perf_counter() - t0, 3)
def c():
    for i in range(G):
        with torch.cuda.device(i): cr.cudaHostRegister(ptr + i * part * 2, part * 2, 0)
    copies(); sync()
    for i in range(G):
        with torch.cuda.device(i): cr.cudaHostUnregister(ptr + i * part * 2)
res['c_per_gpu_lock_s'] = timed(c)
PIECE = 256 << 20; GAP = 64 << 10
def d():
    locked = []
    offs = [0] * G
    while any(o < part * 2 for o in offs):
        for i in range(G):
            if offs[i] >= part * 2: continue
            o = offs[i]; body = min(PIECE, part * 2 - o) - GAP
            a = ptr + i * part * 2 + o
            with torch.cuda.device(i):
                cr.cudaHostRegister(a, body, 0); locked.append((i, a))
                dev[i][o // 2:(o + body) // 2].copy_(x[(i * part * 2 + o) // 2:(i * part * 2 + o + body) // 2], non_blocking=True)
            offs[i] += PIECE
    sync()
    for i, a in locked:
        with torch.cuda.device(i): cr.cudaHostUnregister(a)
res['d_pieces_taking_turns_s'] = timed(d)
print(json.dumps(res))
