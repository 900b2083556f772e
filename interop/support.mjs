// What the interop scripts that drive examples/preferences.py share: where things are, a free
// loopback port, and waiting for the example's HTTP server to come up.
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const ROOT = process.env.RONDO_ROOT ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const PYTHON = process.env.RONDO_PY ?? path.join(ROOT, '.venv', 'bin', 'python');
export const EXAMPLE = path.join(ROOT, 'examples', 'preferences.py');

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export async function waitForHttp(url, child) {
  const deadline = Date.now() + 20000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      await fetch(url, { method: 'GET' });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error('server did not start within 20 s');
}
