// What `/ui/client.js` is (`mastra-agui-bridge/client`, bundled for the browser by
// scripts/browser-client.ts): its types, as the build declares them, for the page's type check
// (`npx tsc -p web`, after `npm run build`).
export * from '../dist/client.js';
