// The React app in web/: `npm run build` writes dist/, which server.ts serves beside the runtime
// (one origin); `npm run dev` serves web/ on Vite's dev server and proxies the runtime's endpoint
// to server.ts (PORT, default 4000).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'web',
  plugins: [react()],
  // CopilotKit's chat brings its markdown renderer (streamdown: code highlighting, mermaid, katex),
  // loaded in chunks as a message needs them; the main chunk is ~2 MB (550 kB gzipped).
  build: { outDir: '../dist', emptyOutDir: true, chunkSizeWarningLimit: 2500 },
  server: {
    proxy: Object.fromEntries(['/api/copilotkit', '/api/agents', '/api/threads'].map((path) => [path, `http://127.0.0.1:${process.env.PORT ?? 4000}`])),
  },
});
