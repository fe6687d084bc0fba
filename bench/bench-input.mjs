// The .npy a bench script runs on, by name: the bundled demo, or a data set of bench/datasets.py
// made once into bench/.data (python3 with numpy).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = join(ROOT, 'bench/.data');

export function benchInput(name) {
  if (name === 'demo') return join(ROOT, 'fixtures/demo-2000x64.npy');
  const file = join(DATA, `${name}.npy`);
  if (!existsSync(file)) {
    mkdirSync(DATA, { recursive: true });
    const r = spawnSync('python3', [join(ROOT, 'bench/datasets.py'), name, file], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`bench/datasets.py ${name} failed (python3 with numpy is needed)`);
  }
  return file;
}
