// Microbenchmark (device-run r6-c): 100M assignments u32 -> u16 into fresh memory (a loop, TypedArray.set) and into a
// buffer on 2 MiB pages (hugeSharedBuffer), against a read-only loop over the same values: the first-touch cost of the write layout.
const n = 100_000_000, m = 65536;
const a = new Uint32Array(n); for (let i = 0; i < n; i++) a[i] = (i * 2654435761) % m;
function cp(a, o) { for (let i = 0; i < a.length; i++) o[i] = a[i]; }
for (let r = 0; r < 3; r++) {
let t = performance.now(); const o = new Uint16Array(n); const t1 = performance.now(); cp(a, o); const t2 = performance.now(); const o2 = new Uint16Array(n); o2.set(a); const t3 = performance.now();
let mx = 0; for (let i = 0; i < n; i++) if (a[i] > mx) mx = a[i]; const t4 = performance.now();
console.log('alloc', (t1 - t).toFixed(0), 'loop', (t2 - t1).toFixed(0), 'set', (t3 - t2).toFixed(0), 'max', (t4-t3).toFixed(0));
}
const { hugeSharedBuffer } = await import('../dist/vectors/huge-pages.js');
for (let r = 0; r < 3; r++) { const t = performance.now(); const o = new Uint16Array(hugeSharedBuffer(2 * n)); cp(a, o); console.log('huge loop', (performance.now() - t).toFixed(0)); }
for (let r = 0; r < 3; r++) { const o = new Uint16Array(n); o.fill(1); const t = performance.now(); cp(a, o); console.log('touched loop', (performance.now() - t).toFixed(0)); }
