import { dts } from 'rollup-plugin-dts';
import esbuild from 'rollup-plugin-esbuild';

// Everything in node_modules stays external: the package ships its own code only.
const external = (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0');

// Each entry's declarations twice: `.d.ts` for `import`, `.d.cts` for `require`. In a
// `"type": "module"` package TypeScript reads a `.d.ts` as ESM, and a CommonJS consumer
// (`module: node16`) would be refused it (TS1479) although `require` works at run time.
const declarations = (name) => [
  { file: `dist/${name}.d.ts`, format: 'es' },
  { file: `dist/${name}.d.cts`, format: 'es' },
];

// Rollup names a shared chunk after one of its modules: the one that holds createBridge (what the
// entries share) is named for what it is, not after whichever module rollup picked.
const chunk = (ext) => (info) => `chunks/${info.moduleIds.some((id) => id.endsWith('/src/bridge.ts')) ? 'bridge' : '[name]'}-[hash].${ext}`;

export default [
  {
    input: { index: 'src/index.ts', demo: 'src/demo/index.ts', server: 'src/server/main.ts' },
    external,
    plugins: [esbuild({ target: 'node20', tsconfig: 'tsconfig.json' })],
    output: [
      { dir: 'dist', format: 'es', entryFileNames: '[name].js', chunkFileNames: chunk('js'), sourcemap: true },
      { dir: 'dist', format: 'cjs', entryFileNames: '[name].cjs', chunkFileNames: chunk('cjs'), sourcemap: true },
    ],
  },
  {
    input: 'src/index.ts',
    external,
    plugins: [dts()],
    output: declarations('index'),
  },
  {
    input: 'src/demo/index.ts',
    external,
    plugins: [dts()],
    output: declarations('demo'),
  },
  // `mastra-agui-bridge/client`: browser-friendly (no Node APIs, no server code); peers @ag-ui/client and rxjs stay external.
  // Its self-contained browser bundle (peers inside), dist/client.browser.js, is scripts/browser-client.ts's step of `npm run build`.
  {
    input: { client: 'src/client/index.ts' },
    external,
    plugins: [esbuild({ target: 'es2022', tsconfig: 'tsconfig.json' })],
    output: [
      { dir: 'dist', format: 'es', entryFileNames: '[name].js', sourcemap: true },
      { dir: 'dist', format: 'cjs', entryFileNames: '[name].cjs', sourcemap: true },
    ],
  },
  {
    input: 'src/client/index.ts',
    external,
    plugins: [dts()],
    output: declarations('client'),
  },
];
