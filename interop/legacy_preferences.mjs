// The official TypeScript client (@modelcontextprotocol/client, default legacy mode: a 2025-era
// `initialize` handshake) drives examples/preferences.py's favorite_color flow, whose handler
// calls ctx.ask: rondo must send elicitation/create as a server-to-client request and finish the
// call with the answer, over HTTP (Mcp-Session-Id session, SSE) and over stdio.
//
//   node interop/legacy_preferences.mjs            # both transports
//   node interop/legacy_preferences.mjs --http     # or --stdio
//
// Needs @modelcontextprotocol/client 2.4.0 resolvable from the script (interop/node_modules via
// interop/package.json; or copy the script next to another install and set RONDO_ROOT to the
// repository) and the repository's .venv. Exits 0 when every check passes.
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { EXAMPLE, PYTHON, freePort, waitForHttp } from './support.mjs';


// One favorite_color call through the client; returns what the wire showed.
async function run(transport) {
  const client = new Client(
    { name: 'rondo-legacy-interop', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  const asked = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { color: 'green' } };
  });
  const sent = [];
  const originalSend = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(structuredClone(message));
    return originalSend(message, options);
  };
  await client.connect(transport, { signal: AbortSignal.timeout(30000) });
  try {
    const era = client.getProtocolEra?.();
    const init = sent.find((m) => m.method === 'initialize');
    assert.ok(init, 'the client opened with initialize (legacy mode)');
    assert.ok(era === undefined || era === 'legacy', `era is ${era}`);
    const result = await client.callTool({ name: 'favorite_color', arguments: { user: 'ann' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'ann likes green.' }]);
    assert.equal(asked.length, 1, 'exactly one elicitation/create reached the client');
    assert.equal(asked[0].message, 'Which color do you like, ann?');
    assert.deepEqual(asked[0].requestedSchema.required, ['color']);
    const answers = sent.filter((m) => m.method === undefined && 'result' in m);
    assert.equal(answers.length, 1, 'the client answered the server request once');
    const calls = sent.filter((m) => m.method === 'tools/call');
    assert.equal(calls.length, 1, 'one tools/call: the answer came over the back-channel, not a retry');
    assert.equal(calls[0].params._meta?.['io.modelcontextprotocol/protocolVersion'], undefined);
    return { version: init.params.protocolVersion, calls: calls.length };
  } finally {
    await client.close();
  }
}

async function overHttp() {
  const port = await freePort();
  const child = spawn(PYTHON, [EXAMPLE, '--http', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  try {
    const url = `http://127.0.0.1:${port}/mcp`;
    await waitForHttp(url, child);
    return await run(new StreamableHTTPClientTransport(new URL(url)));
  } catch (err) {
    console.error(stderr.slice(-2000));
    throw err;
  } finally {
    child.kill('SIGTERM');
  }
}

async function overStdio() {
  const transport = new StdioClientTransport({
    command: PYTHON,
    args: [EXAMPLE, '--stdio'],
    env: { ...process.env },
    stderr: 'pipe',
  });
  return run(transport);
}

const wanted = process.argv.slice(2);
const all = wanted.length === 0;
let failed = false;
for (const [name, fn] of [['http', overHttp], ['stdio', overStdio]]) {
  if (!all && !wanted.includes(`--${name}`)) continue;
  try {
    const info = await fn();
    console.log(`ok   ${name}: favorite_color via ctx.ask, legacy ${info.version}, ${info.calls} tools/call`);
  } catch (err) {
    failed = true;
    console.log(`FAIL ${name}: ${err?.stack ?? err}`);
  }
}
process.exit(failed ? 1 : 0);
