import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './process.js';

// The TypeScript blocks of README.md and docs/, as modules a compiler can check. A block with an
// import starts a module; a block without one goes on from the page's previous module, as a reader
// reads it (in a scope of its own, so two such blocks may name the same thing). The reader's own
// objects that the samples take as given (their agent, storage, page code) are declared once
// (`AMBIENT`): a block fails only for what it really gets wrong.

const PAGES = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** A code block of a page: its language, the line it starts on, its text. */
interface DocBlock {
  page: string;
  lang: string;
  line: number;
  code: string;
}

/** The fenced blocks of a page (``` + a language), with the line each starts on. */
function blocks(page: string): DocBlock[] {
  const out: DocBlock[] = [];
  const lines = readFileSync(join(REPO_ROOT, page), 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const lang = /^\s*```(\w+)\s*$/.exec(lines[i])?.[1];
    if (!lang) continue;
    const indent = lines[i].indexOf('`');
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++;
    out.push({
      page,
      lang,
      line: start + 1,
      code: lines
        .slice(start, end)
        .map((l) => l.slice(indent))
        .join('\n'),
    });
    i = end;
  }
  return out;
}

/** The one TypeScript block of `page` holding `marker` (for the samples a test runs as written). */
export function tsBlockWith(page: string, marker: string): string {
  const found = blocks(page).filter((b) => isTs(b) && b.code.includes(marker));
  if (found.length !== 1) throw new Error(`${page}: expected one TypeScript block with ${marker}, found ${found.length}`);
  return found[0].code;
}

const isTs = (block: DocBlock) => block.lang === 'ts' || block.lang === 'typescript';
const isTsx = (block: DocBlock) => block.lang === 'tsx';

/** One module of samples: its text, and where each of its lines comes from (page:line). */
export interface SampleModule {
  name: string;
  text: string;
  origin: string[];
  /** The packages it imports, as written (`@mastra/core/tools`, `hono`…; relative paths left out). */
  imports: string[];
}

/**
 * The samples of README.md and docs/, one module per block that imports, the blocks after it added:
 * the TypeScript blocks, or with `jsx` the TSX ones (React components: check them with `.tsx`).
 */
export function sampleModules({ jsx = false } = {}): SampleModule[] {
  const modules: Array<{ name: string; text: string[]; origin: string[] }> = [];
  for (const page of PAGES) {
    let current: { name: string; text: string[]; origin: string[] } | undefined;
    for (const { line, code } of blocks(page).filter(jsx ? isTsx : isTs)) {
      const lines = code.split('\n');
      const continues = current !== undefined && !/^\s*import\s/m.test(code);
      if (!continues) modules.push((current = { name: `${page.replace(/[/.]/g, '_')}_${line}`, text: [], origin: [] }));
      const body = continues ? ['{', ...lines, '}'] : lines;
      const origins = continues
        ? [`${page}:${line}`, ...lines.map((_, i) => `${page}:${line + i}`), `${page}:${line}`]
        : lines.map((_, i) => `${page}:${line + i}`);
      current!.text.push(...body);
      current!.origin.push(...origins);
    }
  }
  // A module of its own: top-level await, and no clash between pages.
  return modules.map(({ name, text, origin }) => ({
    name,
    text: [...text, 'export {};', ''].join('\n'),
    origin,
    imports: [...text.join('\n').matchAll(/from '([^'.][^']*)'/g)].map((m) => m[1]),
  }));
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

/** The compiler options every check of the samples shares; each adds its module settings. */
export const SAMPLE_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
  types: ['node'],
  strict: true,
  // What strict readers turn on too: a sample must compile under them as written.
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  esModuleInterop: true,
  skipLibCheck: true,
  experimentalDecorators: true,
};

/**
 * Writes `modules` into `dir` (with `ext`), the ambient declarations and the reader's own module a
 * sample imports (docs/mounting.md: `./agents/support`), and type-checks them with `options`.
 * Returns the problems in the samples, each as `page:line TS<code> message`.
 */
export function checkSamples(dir: string, modules: SampleModule[], options: ts.CompilerOptions, ext = '.ts'): string[] {
  mkdirSync(join(dir, 'agents'), { recursive: true });
  writeFileSync(join(dir, 'ambient.d.ts'), AMBIENT);
  writeFileSync(join(dir, 'agents', `support${ext}`), "import type { Agent } from '@mastra/core/agent';\nexport declare const supportAgent: Agent;\n");
  const files = new Map<string, string[]>();
  for (const { name, text, origin } of modules) {
    const file = join(dir, `${name}${ext}`);
    writeFileSync(file, text);
    files.set(file, origin);
  }
  const program = createProgram([join(dir, 'ambient.d.ts'), ...files.keys()], { noEmit: true, ...options });
  // The samples' own diagnostics only: checking every file they import (this checkout's sources,
  // under `paths`) would report nothing more here, and was most of the time a check took.
  const diagnostics = [...files.keys()].flatMap((file) => {
    const source = program.getSourceFile(file);
    return source ? [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)] : [];
  });
  return diagnostics
    .filter((d) => d.file && files.has(d.file.fileName))
    .map((d) => {
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
      return `${files.get(d.file!.fileName)![line]} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
}

/** The packages' declaration files, parsed (and bound) once in this process for every program that reads them. */
const parsed = new Map<string, ts.SourceFile>();
/** Tells which compiler settings a parsed file depends on, as the language service's own cache does. */
const registry = ts.createDocumentRegistry();

/**
 * `ts.createProgram`, with the packages' declaration files shared between the programs whose
 * settings parse and bind them alike (`getKeyForCompilationSettings`, and the file's own language
 * version and module format): a check is mostly the parse of Mastra's declarations.
 */
export function createProgram(rootNames: string[], options: ts.CompilerOptions): ts.Program {
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  const settings = registry.getKeyForCompilationSettings(options);
  host.getSourceFile = (fileName, version, onError, shouldCreate) => {
    if (!fileName.includes('/node_modules/') || !/\.d\.[cm]?ts$/.test(fileName)) return read(fileName, version, onError, shouldCreate);
    const key = `${fileName}\0${JSON.stringify(version)}\0${settings}`;
    const file = parsed.get(key) ?? read(fileName, version, onError, shouldCreate);
    if (file) parsed.set(key, file);
    return file;
  };
  return ts.createProgram(rootNames, options, host);
}
