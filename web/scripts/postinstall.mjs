// `npm install` builds the console, so `npm install && npm start` serves it. A production install
// without dev dependencies (`npm ci --omit=dev`) has no Vite: it skips the build and says so, and
// the service answers / with how to build it. A build that fails fails the install.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

try {
  createRequire(import.meta.url).resolve('vite/package.json');
} catch {
  process.stdout.write('web console not built: Vite is not installed (dev dependencies omitted); run `npm run build:web` after installing them\n');
  process.exit(0);
}
const result = spawnSync('npm', ['run', 'build:web'], { stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(result.status ?? 1);
