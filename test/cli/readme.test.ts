// The README stays true: every option that `--help` lists for the commands it documents in full
// appears in it, and its quick-start command is the one that works on a fresh clone.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, vlc } from './helpers.js';
import { demoTable, knobTable, quickStart, readmeTable } from '../../scripts/docs-figures.mjs';

const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

describe('README', () => {
  it.each(['compress', 'decompress', 'info', 'eval', 'search'])('documents every option of `vlc %s --help`', (cmd) => {
    const help = vlc([cmd, '--help']).stdout.split('\nExamples:\n')[0]; // the examples' pipes name other tools' flags
    const flags = [...help.matchAll(/(?:^|\s)(--[a-z][a-z0-9-]*|-[a-zA-Z])\b/g)].map((m) => m[1]).filter((f) => f !== '--help' && f !== '-h');
    expect(flags.length).toBeGreaterThan(2);
    for (const f of new Set(flags)) expect(readme, `${cmd} ${f}`).toMatch(new RegExp(`\`(-o, |-q, |-v, )?${f}(?![a-z0-9-])`));
  });

  it('starts with the quick-start command, on the committed demo fixture', () => {
    expect(readme).toContain(
      'npm ci && node bin/vlc.js compress fixtures/demo-2000x64.npy -o /tmp/demo.vlc && node bin/vlc.js info /tmp/demo.vlc',
    );
    expect(fs.existsSync(path.join(ROOT, 'fixtures/demo-2000x64.npy'))).toBe(true);
    expect(fs.statSync(path.join(ROOT, 'fixtures/demo-2000x64.npy')).size).toBeLessThan(1 << 20);
  });

  it('holds the demo table a fresh run gives (npm run docs:figures -- --write rewrites it)', () => {
    expect(readmeTable('demo-table')).toBe(demoTable());
  }, 300_000);

  it("quotes the quick start's figures from that same run (its choice and summary lines)", () => {
    expect(readmeTable('quick-start')).toBe(quickStart());
    // The default on the demo is the entropy-coded codec at the step the --quality search planned (ec 25.6B); the summary gives the file's
    // recall with its 95 % interval (the sample is every vector: one figure).
    expect(quickStart()).toMatch(
      /`chose ec [0-9.]+B residuals for --quality 0\.9: recall@10 [0-9.]+ ± [0-9.]+ …` and\n`\/tmp\/demo\.vlc: [0-9.]+ bytes\/vector = [0-9.]+% of f32 \([0-9,]+ bytes\); relative error [0-9.]+, cosine [0-9.]+, recall@10 [0-9.]+ \(95 % interval [0-9.]+–[0-9.]+\); …`/,
    );
  }, 300_000);

  it('holds the quality-knob table of bench/results/quality-knob.json (bench/quality-knob.mjs measures it)', () => {
    const table = knobTable();
    expect(table).not.toBeNull();
    expect(readmeTable('knob-table')).toBe(table);
  });

});
