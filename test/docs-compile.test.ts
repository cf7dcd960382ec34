import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { installExample } from './support/examples.js';
import { REPO_ROOT } from './support/process.js';

// Every TypeScript block in the README and docs/ type-checks as written, with the imports it
// shows (`mastra-agui-bridge` resolves to this checkout's sources). A block with an import starts a
// module; a block without one goes on from the page's previous module, as a reader reads it (in a
// scope of its own, so two such blocks may name the same thing). The reader's own objects that the
// samples take as given (their agent, storage, page code) are declared once, below: a block fails
// only for what it really gets wrong.

const PAGES = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The blocks of a page: ```ts / ```typescript fences, with the line each starts on. */
function blocks(page: string): Array<{ line: number; code: string }> {
  const out: Array<{ line: number; code: string }> = [];
  const lines = readFileSync(join(REPO_ROOT, page), 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```(ts|typescript)\s*$/.test(lines[i])) continue;
    const indent = lines[i].indexOf('`');
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++;
    out.push({ line: start + 1, code: lines.slice(start, end).map((l) => l.slice(indent)).join('\n') });
    i = end;
  }
  return out;
}

/** What the docs' samples take as given: the reader's own objects, as they would type them. */
const AMBIENT = `
import type { HttpAgent } from '@ag-ui/client';
import type { Message, Tool } from '@ag-ui/core';
import type { Mastra } from '@mastra/core';
import type { Agent } from '@mastra/core/agent';
import type { MastraStorage } from '@mastra/core/storage';
declare global {
  /** The reader's own Mastra agents, Mastra instance and storage. */
  const supportAgent: Agent;
  const weatherAgent: Agent;
  const mastra: Mastra;
  const storage: MastraStorage;
  /** The reader's AG-UI agent (an HttpAgent or BridgeAgent), its frontend tools, the bridge's URL. */
  const agent: HttpAgent;
  const tools: Tool[];
  const baseUrl: string;
  /** The reader's page and auth code. */
  function render(messages: readonly Message[]): void;
  function pickColor(prompt: string): Promise<string>;
  function verifySession(authorization: string | undefined): Promise<{ userId: string } | undefined>;
}
export {};
`;

// Beside the CopilotKit example, so the blocks that import CopilotKit find its packages (the root's too).
const dir = join(REPO_ROOT, 'examples', 'copilotkit', '.doc-samples');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the TypeScript in README and docs/', () => {
  it('type-checks, block by block, with the imports each shows', async () => {
    await installExample('copilotkit');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'ambient.d.ts'), AMBIENT);
    // The reader's own module a sample imports (docs/mounting.md: `./agents/support`).
    mkdirSync(join(dir, 'agents'));
    writeFileSync(join(dir, 'agents', 'support.ts'), "import type { Agent } from '@mastra/core/agent';\nexport declare const supportAgent: Agent;\n");
    // Per module: its text so far, and where each of its lines comes from (page and line).
    const modules = new Map<string, { text: string[]; origin: string[] }>();
    for (const page of PAGES) {
      let current: { text: string[]; origin: string[] } | undefined;
      for (const { line, code } of blocks(page)) {
        const lines = code.split('\n');
        const continues = current !== undefined && !/^\s*import\s/m.test(code);
        if (!continues) modules.set(join(dir, `${page.replace(/[/.]/g, '_')}_${line}.ts`), (current = { text: [], origin: [] }));
        const body = continues ? ['{', ...lines, '}'] : lines;
        const origins = continues ? [`${page}:${line}`, ...lines.map((_, i) => `${page}:${line + i}`), `${page}:${line}`] : lines.map((_, i) => `${page}:${line + i}`);
        current!.text.push(...body);
        current!.origin.push(...origins);
      }
    }
    const files = new Map<string, string[]>();
    for (const [file, { text, origin }] of modules) {
      // A module of its own: top-level await, and no clash between pages.
      writeFileSync(file, [...text, 'export {};', ''].join('\n'));
      files.set(file, origin);
    }
    expect(files.size).toBeGreaterThan(10);
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      types: ['node'],
      strict: true,
      esModuleInterop: true,
      skipLibCheck: true,
      experimentalDecorators: true,
      noEmit: true,
      baseUrl: REPO_ROOT,
      paths: {
        'mastra-agui-bridge': ['src/index.ts'],
        'mastra-agui-bridge/client': ['src/client/index.ts'],
        'mastra-agui-bridge/demo': ['src/demo/index.ts'],
      },
    };
    const program = ts.createProgram([join(dir, 'ambient.d.ts'), ...files.keys()], options);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && files.has(d.file.fileName))
      .map((d) => {
        const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
        return `${files.get(d.file!.fileName)![line]} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
      });
    expect(problems).toEqual([]);
  }, 600_000);
});
