// Setting up stays quiet: every installed package with an install script is listed in
// package.json's allowScripts (npm 11 warns about each one that is not; README "Quick start").
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

function packages(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).flatMap((name) => {
    if (name.startsWith('.')) return [];
    if (name.startsWith('@')) return fs.readdirSync(path.join(dir, name)).map((sub) => path.join(dir, name, sub));
    return [path.join(dir, name)];
  });
}

describe('npm ci', () => {
  it('every dependency with an install script is allowed or denied in package.json (allowScripts)', () => {
    const allow: Record<string, boolean> = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).allowScripts ?? {};
    const withScripts = packages(path.join(ROOT, 'node_modules')).flatMap((p) => {
      const file = path.join(p, 'package.json');
      if (!fs.existsSync(file)) return [];
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
      return ['preinstall', 'install', 'postinstall'].some((s) => pkg.scripts?.[s]) ? [pkg.name as string] : [];
    });
    expect(withScripts).toContain('koffi');
    for (const name of withScripts) expect(Object.keys(allow), name).toContain(name);
  });
});
