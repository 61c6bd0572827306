// The console is built to web/dist, which the service serves at /. `npm run dev:web` serves it with
// hot reload on :5173 and forwards the API to a service on :3000.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const service = process.env.DMS_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 600 },
  // '/api/', not '/api': the console's own /api-keys route must stay with the console.
  server: { proxy: { '/api/': service, '/openapi.json': service } },
});
