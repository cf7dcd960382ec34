import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/process.js';

// The docs point at the project's own pages: every relative link in the README and docs/ reaches
// a file, and its `#anchor` a heading of it; every `docs/<page>.md "<Section>"` a source comment
// cites names a heading or a bold lead of that page; nothing cites a contract file the project
// does not ship.

const DOC_PAGES = ['README.md', ...mdFiles('docs'), ...mdFiles('examples').filter((f) => !f.includes('node_modules'))];
const SOURCE_DIRS = ['src', 'test', 'web', 'scripts', 'bench', 'bin', 'examples/copilotkit/web', 'examples/copilotkit/server'];

function mdFiles(dir: string): string[] {
  return walk(dir).filter((f) => f.endsWith('.md'));
}

function walk(dir: string): string[] {
  const abs = join(REPO_ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) return [];
    const path = join(dir, name);
    return statSync(join(REPO_ROOT, path)).isDirectory() ? walk(path) : [path];
  });
}

/** A page's text outside its code fences: a `#` line in a shell sample is no heading, a `[x](y)` in code no link. */
function prose(file: string): string[] {
  let fenced = false;
  return readFileSync(join(REPO_ROOT, file), 'utf8')
    .split('\n')
    .filter((line) => {
      if (/^\s*```/.test(line)) fenced = !fenced;
      return !fenced && !/^\s*```/.test(line);
    });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get `-1`, `-2`. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(file)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/**
 * Whether a page names a section: a heading that starts with that text ("Tenancy" for "Tenancy:
 * another resource's thread…"), or a bullet's bold lead (`**Section.**`).
 */
function namesSection(file: string, section: string): boolean {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const escaped = section.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^#{1,6}\\s+${escaped}(\\s*$|[,:;.]|\\s)|\\*\\*${escaped}[.:]?\\*\\*`, 'm').test(text);
}

describe('links and citations in the docs', () => {
  it('every relative link of the README and docs/ reaches a file, and a heading of it', () => {
    expect(DOC_PAGES.length).toBeGreaterThan(10);
    const broken: string[] = [];
    for (const page of DOC_PAGES) {
      for (const line of prose(page)) {
        for (const [, target] of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          if (/^[a-z]+:/i.test(target)) continue;
          const [path, anchor] = target.split('#');
          const file = path === '' ? page : relative(REPO_ROOT, resolve(REPO_ROOT, dirname(page), path));
          if (!existsSync(join(REPO_ROOT, file))) broken.push(`${page}: ${target} (no such file)`);
          else if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('every `docs/<page>.md "<Section>"` cited in the sources names a section of that page', () => {
    const cited: Array<{ where: string; file: string; section: string }> = [];
    for (const file of SOURCE_DIRS.flatMap(walk).filter((f) => /\.(ts|tsx|js|mjs)$/.test(f))) {
      const text = readFileSync(join(REPO_ROOT, file), 'utf8').replace(/\n\s*(\*|\/\/)\s*/g, ' ');
      for (const [, page, section] of text.matchAll(/(docs\/[\w-]+\.md),? "([^"]+)"/g)) cited.push({ where: file, file: page, section });
    }
    expect(cited.length).toBeGreaterThan(5);
    const missing = cited.filter(({ file, section }) => !existsSync(join(REPO_ROOT, file)) || !namesSection(file, section));
    expect(missing).toEqual([]);
  });

  it('a page that numbers its steps (the curl sessions: **1.**, **2.**, …) numbers them 1 to n, each once, and names only steps it has', () => {
    const misnumbered: string[] = [];
    for (const page of DOC_PAGES) {
      const steps = prose(page)
        .flatMap((line) => /^\*\*(\d+)\./.exec(line)?.[1] ?? [])
        .map(Number);
      if (steps.some((n, i) => n !== i + 1)) misnumbered.push(`${page}: ${steps.join(' ')}`);
      for (const [, n] of prose(page)
        .join('\n')
        .matchAll(/\(step (\d+)\)/g))
        if (Number(n) > steps.length) misnumbered.push(`${page}: names step ${n}`);
    }
    expect(misnumbered).toEqual([]);
  });

  it('nothing cites API.md: the project’s contract is docs/api.md', () => {
    const files = [...DOC_PAGES, ...SOURCE_DIRS.flatMap(walk)].filter((f) => /\.(md|ts|tsx|js|mjs|html)$/.test(f) && f !== 'test/docs-links.test.ts');
    expect(files.filter((f) => /\bAPI\.md\b/.test(readFileSync(join(REPO_ROOT, f), 'utf8')))).toEqual([]);
  });
});
