import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { EventType } from '@ag-ui/client';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistantText, runInput, runStrict, userMessage } from './support/agui.js';
import { checkSamples, createProgram, SAMPLE_OPTIONS, sampleModules, tsBlockWith, type SampleModule } from './support/doc-samples.js';
import { installLine, npm, packPackage } from './support/package.js';
import { freePort } from './support/ports.js';
import { isolatedPostgres, isolatedRedisPrefix, POSTGRES_URL, REDIS_URL } from './support/services.js';
import { killIfRunning, REPO_ROOT, startNodeProcess, type ServerProcess } from './support/process.js';
import { http } from './support/server.js';
import { openSse } from './support/sse.js';

// The package as a library user gets it: `npm pack` (of the build the tests share), the tarball installed
// into an empty project with the README's install line (npm's cache first: no network once the
// packages were fetched), then used from ESM (mounted into a Mastra server, a run), from CommonJS,
// from TypeScript under three module settings, and the runnable doc samples run as written.

const node = promisify(execFile);
let project: string;
let tarball: string;
/** What npm said while it installed the package with the README's line. */
let installWarnings: string[];
const servers: ServerProcess[] = [];

beforeAll(async () => {
  tarball = await packPackage();
  project = mkdtempSync(join(tmpdir(), 'bridge-consumer-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const line = installLine().map((word) => (word === 'mastra-agui-bridge' ? tarball : word));
  const { stderr } = await npm(project, [...line, '--prefer-offline', '--no-audit', '--no-fund']);
  installWarnings = stderr.split('\n').filter((l) => l.startsWith('npm warn'));
}, 300_000);

afterAll(() => {
  for (const server of servers) killIfRunning(server);
  if (project) rmSync(project, { recursive: true, force: true });
  if (tarball) rmSync(dirname(tarball), { recursive: true, force: true });
});

const installed = (name: string) => existsSync(join(project, 'node_modules', name, 'package.json'));

describe('the packed package, installed with the README line', () => {
  it('brings one copy of Mastra (the app’s) and nothing only the server or scale-out needs', () => {
    expect(installed('mastra-agui-bridge')).toBe(true);
    expect(installed('@mastra/core')).toBe(true);
    expect(installed('@mastra/memory')).toBe(true);
    expect(existsSync(join(project, 'node_modules/mastra-agui-bridge/node_modules/@mastra/core'))).toBe(false);
    const serverOnly = ['@mastra/libsql', '@mastra/pg', 'pg', 'redis', 'tsx', 'esbuild', 'typescript'];
    // Traces' packages are optional peers too: a host that does not trace installs none of them.
    const traces = ['@opentelemetry/sdk-node', '@opentelemetry/sdk-trace-base', '@mastra/observability', '@mastra/otel-bridge'];
    for (const name of [...serverOnly, ...traces]) expect(installed(name), name).toBe(false);
  });

  it('ships the demo page’s modules, not what only checks them (web/tsconfig.json, web/*.d.ts)', () => {
    const web = (file: string) => existsSync(join(project, 'node_modules/mastra-agui-bridge/web', file));
    expect(['index.html', 'app.js', 'page.js', 'follow.js', 'cards.js', 'dom.js', 'transcript-items.js'].filter((file) => !web(file))).toEqual([]);
    expect(['tsconfig.json', 'client.d.ts', 'page-types.d.ts'].filter(web)).toEqual([]);
  });

  it('installs quietly: on Node 20, only the engine warnings the README explains (Mastra asks for Node 22)', () => {
    const explained = /^npm warn EBADENGINE/;
    const onNode20 = Number(process.versions.node.split('.')[0]) < 22;
    expect(installWarnings.filter((line) => !(onNode20 && explained.test(line)))).toEqual([]);
    expect(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).toMatch(/EBADENGINE/);
  });

  it('the bin asked for traces without their packages stops and says what to install', async () => {
    const bin = join(project, 'node_modules/mastra-agui-bridge/bin/mastra-agui-bridge.js');
    const env = { ...process.env, PORT: '0', npm_lifecycle_event: '', npm_command: '', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' };
    const failed = await node(process.execPath, [bin], { cwd: project, env, timeout: 60_000 }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toBe(
      "mastra-agui-bridge: @opentelemetry/sdk-node is not installed; tracing (OTEL_EXPORTER_OTLP_ENDPOINT) needs it: npm install '@opentelemetry/sdk-node@>=0.218.0'\n",
    );
  }, 60_000);

  it('has no install script (the checkout’s `prepare` stays out of the packed manifest); the chunk the entries share is named bridge-*', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/mastra-agui-bridge/package.json'), 'utf8')) as { scripts?: Record<string, string> };
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) expect(manifest.scripts?.[script], script).toBeUndefined();
    const chunks = readdirSync(join(project, 'node_modules/mastra-agui-bridge/dist/chunks')).filter((file) => /\.(c?js)$/.test(file));
    expect(chunks.filter((file) => file.startsWith('bridge-'))).toHaveLength(2);
    expect(chunks.filter((file) => file.startsWith('pino-logger'))).toEqual([]);
  });

  it('the bin, without @mastra/libsql, stops and says what to install', async () => {
    const bin = join(project, 'node_modules/mastra-agui-bridge/bin/mastra-agui-bridge.js');
    const failed = await node(process.execPath, [bin], {
      cwd: project,
      env: { ...process.env, PORT: '0', npm_lifecycle_event: '', npm_command: '' },
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toBe(
      'mastra-agui-bridge: @mastra/libsql is not installed; a LibSQL DATABASE_URL (the default) needs it: npm install @mastra/libsql@~1.23.1\n',
    );
    // Run through npx, the hint is npx's.
    const viaNpx = await node(process.execPath, [bin], {
      cwd: project,
      env: { ...process.env, PORT: '0', npm_lifecycle_event: 'npx', npm_command: 'exec' },
      timeout: 60_000,
    }).catch((error: { stderr?: string }) => error);
    expect(viaNpx.stderr).toContain('needs it: npx -p mastra-agui-bridge -p @mastra/libsql@~1.23.1 mastra-agui-bridge');
  }, 60_000);

  it('createScaleOut without redis says what to install', async () => {
    const script =
      "import { createScaleOut } from 'mastra-agui-bridge'; await createScaleOut({ url: 'redis://127.0.0.1:1' }).catch((e) => console.log(e.message));";
    const { stdout } = await node(process.execPath, ['--input-type=module', '-e', script], { cwd: project, timeout: 60_000 });
    expect(stdout.trim()).toBe("redis is not installed; RedisPubSub and the bridge's scale-out (REDIS_URL, createScaleOut) need it: npm install redis@^6.3.1");
  }, 60_000);

  describe('with what the samples import (the host app’s own packages)', () => {
    beforeAll(async () => {
      // The client's peers as docs/client.md's install line names them (the rest is the README's).
      const client = installLine('docs/client.md').filter((word) => /^(@ag-ui\/client|rxjs)(@|$)/.test(word));
      // And Mastra's CLI, for `mastra build` below: one install instead of two.
      const extras = ['@mastra/libsql@~1.23.1', '@mastra/pg@~1.27.1', 'pg@^8.23.1', 'redis@^6.3.1', '@mastra/hono@1.7.9', 'mastra@1.31.0', ...client];
      await npm(project, ['install', ...extras, '--prefer-offline', '--no-audit', '--no-fund']);
    }, 300_000);

    it('is required from CommonJS: every entry', async () => {
      writeFileSync(
        join(project, 'require.cjs'),
        `const { createBridge, RunTranslator } = require('mastra-agui-bridge');
const { BridgeAgent, BridgeClient } = require('mastra-agui-bridge/client');
const { createDemoAgent, createScriptedModel } = require('mastra-agui-bridge/demo');
const bridge = createBridge({});
console.log(JSON.stringify({ routes: bridge.routes().length, translator: typeof RunTranslator, agent: typeof BridgeAgent, client: typeof BridgeClient, demo: createDemoAgent({ delayMs: 0 }).id, scripted: createScriptedModel().provider }));
bridge.shutdown();
`,
      );
      const { stdout } = await node(process.execPath, ['require.cjs'], { cwd: project, timeout: 60_000 });
      const result = JSON.parse(stdout) as Record<string, unknown>;
      expect(result).toMatchObject({ translator: 'function', agent: 'function', client: 'function', demo: 'demo', scripted: 'demo' });
      expect(result.routes).toBeGreaterThan(10);
    }, 60_000);

    it('ESM: mounted into a Mastra server (@mastra/hono), answers a run', async () => {
      writeFileSync(
        join(project, 'mount.mjs'),
        `import { serve } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import { InMemoryStore } from '@mastra/core/storage';
import { MastraServer } from '@mastra/hono';
import { Hono } from 'hono';
import { createBridge } from 'mastra-agui-bridge';
import { createDemoAgent } from 'mastra-agui-bridge/demo';

const storage = new InMemoryStore();
const bridge = createBridge({ prefix: '/agui' });
const mastra = new Mastra({ agents: { demo: createDemoAgent({ storage, delayMs: 0 }) }, storage, logger: false, server: { apiRoutes: bridge.routes() } });
const app = new Hono();
await new MastraServer({ app, mastra }).init();
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, ({ port }) => console.log(\`listening on http://127.0.0.1:\${port}/agui\`));
`,
      );
      const server = await startNodeProcess(['mount.mjs'], project);
      servers.push(server);
      const run = await runStrict(`${server.url}/run`, runInput({ messages: [userMessage('hello from a packed bridge')] }));
      expect(assistantText(run.events)).toBe('Echo: hello from a packed bridge');
      expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
    }, 60_000);

    it('three processes from docs/scaling.md’s sample started at once on a new database all serve, recover() included', async () => {
      const [db, redis] = await Promise.all([isolatedPostgres('library-race'), isolatedRedisPrefix('library-race')]);
      let started: ServerProcess[] = [];
      try {
        writeFileSync(
          join(project, 'scale-out.mjs'),
          `import { serve } from '@hono/node-server';
import { Mastra } from '@mastra/core';
import { PostgresStore } from '@mastra/pg';
import { createBridge, createScaleOut } from 'mastra-agui-bridge';
import { createDemoAgent } from 'mastra-agui-bridge/demo';

const scaleOut = await createScaleOut({ url: process.env.REDIS_URL, prefix: process.env.REDIS_PREFIX });
const storage = new PostgresStore({ id: 'app', connectionString: process.env.POSTGRES_URL, schemaName: process.env.SCHEMA });
const mastra = new Mastra({ agents: { demo: createDemoAgent({ delayMs: 0 }) }, storage, pubsub: scaleOut.pubsub, logger: false });
const bridge = createBridge({ scaleOut });
const server = serve({ fetch: bridge.app(mastra).fetch, hostname: '127.0.0.1', port: 0 }, async ({ port }) => {
  await bridge.recover(mastra);
  console.log(\`listening on http://127.0.0.1:\${port}/agui\`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`,
        );
        const env = { POSTGRES_URL, SCHEMA: db.schema, REDIS_URL, REDIS_PREFIX: redis.prefix };
        // Each would exit on a failed recover() (an unhandled rejection) before it says it listens.
        started = await Promise.all([1, 2, 3].map(() => startNodeProcess(['scale-out.mjs'], project, env)));
        for (const [i, server] of started.entries()) {
          const run = await runStrict(`${server.url}/run`, runInput({ messages: [userMessage(`hello from process ${i}`)] }));
          expect(assistantText(run.events)).toBe(`Echo: hello from process ${i}`);
        }
      } finally {
        for (const server of started) killIfRunning(server);
        await Promise.all([db.cleanup(), redis.cleanup()]);
      }
    }, 120_000);

    it('runs the docs’ standalone library sample and client sample as written (on a free port)', async () => {
      const port = await freePort();
      const standalone = sample('docs/mounting.md', "mkdirSync('.data'").replace('port: 4111', `port: ${port}`);
      const client = sample('docs/client.md', 'agent.connectAgent(').replace("'http://127.0.0.1:4111/agui'", `'http://127.0.0.1:${port}/agui'`);
      // Told when the sample's `server` listens (the sample itself prints nothing).
      const listening = `const ready = () => console.log('listening on http://127.0.0.1:${port}/agui');\nif (server.listening) ready(); else server.once('listening', ready);\n`;
      // What the samples take as given: the reader's agent, and their page's render().
      writeFileSync(
        join(project, 'standalone.mjs'),
        `import { createDemoAgent } from 'mastra-agui-bridge/demo';\nconst supportAgent = createDemoAgent({ delayMs: 0 });\n${standalone}\n${listening}`,
      );
      writeFileSync(join(project, 'client.mjs'), `const render = () => {};\n${client}`);
      rmSync(join(project, '.data'), { recursive: true, force: true });
      const server = await startNodeProcess(['standalone.mjs'], project);
      servers.push(server);
      const { stdout } = await node(process.execPath, ['client.mjs'], { cwd: project, timeout: 60_000 });
      expect(stdout).toContain('connection: live');
      const history = await http(`${server.url}/threads/trip-42/messages?resourceId=demo-user`);
      expect(history.status).toBe(200);
      expect(JSON.stringify(history.body)).toContain('What is the weather in Oslo?');
      // The sample's SIGTERM handler: drain, shut down, exit 0.
      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
    }, 120_000);

    it('under `mastra build`: docs/mounting.md’s lifecycle sample serves runs, and on SIGTERM a run in flight finishes, the streams end, the server exits and the run is stored', async () => {
      // The sample as written, after what it takes as given: the reader's agent and storage.
      const given = [
        "import { LibSQLStore } from '@mastra/libsql';",
        "import { createDemoAgent } from 'mastra-agui-bridge/demo';",
        'const storage = new LibSQLStore({ id: "app", url: `file:${process.env.APP_DB}` });',
        'const supportAgent = createDemoAgent({ storage, delayMs: 20 });',
      ];
      mkdirSync(join(project, 'src/mastra'), { recursive: true });
      writeFileSync(join(project, 'src/mastra/index.ts'), [...given, tsBlockWith('docs/mounting.md', "process.once('SIGTERM'")].join('\n'));
      const quiet = { ...process.env, MASTRA_TELEMETRY_DISABLED: '1' };
      await node(join(project, 'node_modules/.bin/mastra'), ['build'], { cwd: project, env: quiet, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });

      // Mastra's generated server, as `mastra start` / `node .mastra/output/index.mjs` runs it.
      const env = { MASTRA_TELEMETRY_DISABLED: '1', APP_DB: join(project, 'mastra-app.db') };
      const mastraReady = /Mastra API running \{ url: '(http:\/\/[^']+)\/api' \}/;
      const start = async () => startNodeProcess(['.mastra/output/index.mjs'], project, { ...env, PORT: String(await freePort()) }, mastraReady);
      const server = await start();
      servers.push(server);
      const base = `${server.url}/agui`;
      const threadId = 'mastra-build-thread';
      const follower = await openSse(`${base}/threads/${threadId}/events`);
      const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
      // SIGTERM once the answer has begun: Mastra's handler and the sample's run side by side.
      let signalled = false;
      const run = await runStrict(`${base}/run`, runInput({ threadId, messages: [userMessage(words)] }), (event) => {
        if (event.type !== EventType.TEXT_MESSAGE_CONTENT || signalled) return;
        signalled = true;
        server.child.kill('SIGTERM');
      });
      expect(signalled).toBe(true);
      expect(run.terminal.type).toBe(EventType.RUN_FINISHED);
      expect(assistantText(run.events)).toBe(`Echo: ${words}`);
      // Ended by the bridge's shutdown() (a complete response), not cut when the process exits: so
      // Mastra's drain completes without waiting out its drainTimeout.
      expect(await follower.ended).toEqual({ kind: 'done' });
      expect(await server.exited).toEqual({ code: 0, signal: null });

      const again = await start();
      servers.push(again);
      const history = await http(`${again.url}/agui/threads/${threadId}/messages`);
      expect(JSON.stringify(history.body)).toContain(`Echo: ${words}`);
      again.child.kill('SIGTERM');
      expect(await again.exited).toEqual({ code: 0, signal: null });
    }, 600_000);

    it('runs docs/demo-agent.md’s scripted model behind an agent of the reader’s own, as written', async () => {
      writeFileSync(join(project, 'scripted.mjs'), `${sample('docs/demo-agent.md', 'createScriptedModel({ delayMs: 0 })')}\nconsole.log(text);\n`);
      const { stdout } = await node(process.execPath, ['scripted.mjs'], { cwd: project, timeout: 60_000 });
      expect(stdout.trim()).toBe('Echo: hello there');
    }, 60_000);

    describe('TypeScript: the samples of README.md and docs/ type-check against the package', () => {
      // CopilotKit's blocks are checked by docs-compile.test.ts, beside the example that installs it.
      const modules = () => sampleModules().filter((m) => !m.imports.some((name) => name.startsWith('@copilotkit/')));
      // @types/node from this checkout: the project installed only what a library user would.
      const common: ts.CompilerOptions = { ...SAMPLE_OPTIONS, typeRoots: [join(REPO_ROOT, 'node_modules/@types')] };
      const check = (name: string, options: ts.CompilerOptions, list: SampleModule[] = modules(), ext?: string) => {
        const dir = join(project, name);
        mkdirSync(dir, { recursive: true });
        return checkSamples(dir, list, { ...common, ...options }, ext);
      };

      it('every createBridge option carries its documentation in the packed types (what an editor shows on hover)', () => {
        const file = join(project, 'options.ts');
        writeFileSync(file, "import { createBridge } from 'mastra-agui-bridge';\nexport const options: Parameters<typeof createBridge>[0] = {};\n");
        const program = createProgram([file], { ...common, module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, noEmit: true });
        const checker = program.getTypeChecker();
        const declaration = program.getSourceFile(file)!.statements.find(ts.isVariableStatement)!.declarationList.declarations[0];
        const options = checker.getNonNullableType(checker.getTypeAtLocation(declaration.name)).getProperties();
        expect(options.length).toBeGreaterThan(20);
        const undocumented = options
          .filter((option) => ts.displayPartsToString(option.getDocumentationComment(checker)).trim() === '')
          .map((option) => option.name);
        expect(undocumented).toEqual([]);
        const withoutExample = options.filter((option) => !option.getJsDocTags(checker).some((tag) => tag.name === 'example')).map((option) => option.name);
        expect(withoutExample).toEqual([]);
      });

      it('the client’s declarations check with skipLibCheck: false, installed as docs/client.md says', () => {
        const file = join(project, 'client-use.ts');
        writeFileSync(
          file,
          "import { BridgeAgent, BridgeClient } from 'mastra-agui-bridge/client';\nexport const agent = new BridgeAgent({ baseUrl: '/agui', threadId: 't' });\nexport const client = new BridgeClient({ baseUrl: '/agui' });\n",
        );
        const program = createProgram([file], {
          ...common,
          skipLibCheck: false,
          module: ts.ModuleKind.Node16,
          moduleResolution: ts.ModuleResolutionKind.Node16,
          noEmit: true,
        });
        // Other packages' declarations are theirs to keep; the package's own and the reader's file are checked.
        const ours = ts
          .getPreEmitDiagnostics(program)
          .filter((d) => !d.file || d.file.fileName === file || d.file.fileName.includes('node_modules/mastra-agui-bridge/'));
        expect(ours.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0])).toEqual([]);
      });

      it('moduleResolution bundler', () => {
        expect(check('bundler', { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler })).toEqual([]);
      }, 120_000);

      it('node16, as ES modules', () => {
        const problems = check('node16-esm', { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16 });
        expect(problems.filter((p) => !readersOwnModule(p))).toEqual([]);
      }, 120_000);

      it('node16, as CommonJS (.cts)', () => {
        // CommonJS has no top-level await: each sample's statements run in an async function.
        const problems = check(
          'node16-cjs',
          { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16 },
          modules().map(inAsyncFunction),
          '.cts',
        );
        expect(problems.filter((p) => !readersOwnModule(p) && !esmOnlyElsewhere(p))).toEqual([]);
        // What the issue reported: the client entry, from CommonJS TypeScript.
        expect(problems.filter((p) => p.includes('mastra-agui-bridge'))).toEqual([]);
      }, 120_000);
    });
  });
});

/** The TypeScript block of `page` holding `marker`, as JavaScript (types taken out, nothing else changed). */
function sample(page: string, marker: string): string {
  return ts.transpileModule(tsBlockWith(page, marker), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
}

/**
 * mounting.md imports the reader's agent as Mastra's templates write it (`./agents/support`, no
 * extension), which node16's ES modules do not resolve: the reader's code, not the package's.
 */
const readersOwnModule = (problem: string) => /TS(2307|283[45]) .*'\.\/agents\/support(\.js)?'/.test(problem);

/**
 * A package whose types are ES modules only (`@mastra/core`, `@mastra/memory`, `inversify`, …): a
 * CommonJS file cannot import it statically (TS1479). Their packaging, not this package's, whose
 * entries each have CommonJS types.
 */
const esmOnlyElsewhere = (problem: string) => / TS1479 .*import\("(?!mastra-agui-bridge)[^"]+"\)/.test(problem);

/** A sample module for a `.cts` file: its imports and declarations first, the rest inside an async function. */
function inAsyncFunction(module: SampleModule): SampleModule {
  const lines = module.text.split('\n');
  const hoisted: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^import\s/.test(lines[i])) continue;
    let end = i;
    while (!/from\s+'[^']+';?\s*(\/\/.*)?$/.test(lines[end]) && !/^import\s+'[^']+';?$/.test(lines[end])) end++;
    for (let j = i; j <= end; j++) hoisted.push(j);
    i = end;
  }
  // Declarations stay at the top level with the imports (`declare` cannot appear in a function).
  for (let i = 0; i < lines.length; i++) if (/^declare\s/.test(lines[i])) hoisted.push(i);
  const isHoisted = new Set(hoisted);
  // Statements in a function: an `export` there would be a syntax error of the wrapping, not of the sample.
  const body = lines
    .map((line, i) => ({
      line: line.replace(/^export (?=const|function|class|async)/, ''),
      origin: module.origin[i] ?? module.origin[module.origin.length - 1],
    }))
    .filter((_, i) => !isHoisted.has(i) && lines[i] !== 'export {};');
  const head = hoisted.map((i) => ({ line: lines[i], origin: module.origin[i] }));
  const wrapped = [...head, { line: 'export async function sample() {', origin: head[0]?.origin ?? '' }, ...body, { line: '}', origin: '' }];
  return { ...module, text: wrapped.map((w) => w.line).join('\n'), origin: wrapped.map((w) => w.origin) };
}
