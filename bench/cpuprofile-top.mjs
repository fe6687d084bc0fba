#!/usr/bin/env node
// Summarise a V8 .cpuprofile (node --cpu-prof): the functions with the most self time.
// Usage: node bench/cpuprofile-top.mjs file.cpuprofile [count]
import { readFileSync } from 'node:fs';

const [file, count = '25'] = process.argv.slice(2);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const total = (prof.endTime - prof.startTime) / 1000; // ms
const samples = prof.samples.length;
const perSample = total / Math.max(1, samples);
const self = new Map();
for (const node of prof.nodes) {
  const f = node.callFrame;
  const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + (node.hitCount ?? 0) * perSample);
}
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(count));
console.log(`profile ${file}: ${total.toFixed(0)} ms, ${samples} samples`);
for (const [k, ms] of rows) console.log(`${ms.toFixed(1).padStart(9)} ms  ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${k}`);
