// The official TypeScript client (@modelcontextprotocol/client 2.4.0, pinned) calling tools that
// rondo.openapi generated from a real FastAPI app (tests/helpers/openapi_app.py, served on loopback),
// on a fleet of two `rondo run --worker-id` workers sharing RONDO_STATE_KEYS. The client's fetch
// sends each tools/call to the next worker in turn (a round-robin balancer), so a confirmed
// DELETE's two rounds land on two workers; the Rondo-Worker header proves which.
//
//   node interop/ts_openapi_fleet_check.mjs
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { PYTHON, ROOT, freePort, waitForHttp } from './support.mjs';

const MODERN = '2026-07-28';

function start(args, env, label) {
  const child = spawn(PYTHON, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  child.log = '';
  child.stderr.on('data', (chunk) => { child.log += chunk; });
  child.label = label;
  return child;
}

async function main() {
  const apiPort = await freePort();
  const api = `http://127.0.0.1:${apiPort}`;
  const children = [start([path.join(ROOT, 'tests', 'helpers', 'openapi_app.py'), String(apiPort)], {}, 'api')];
  const keys = `k1:${randomBytes(32).toString('base64url')}`;
  const workers = [];
  try {
    await waitForHttp(`${api}/openapi.json`, children[0]);
    for (const id of ['wa', 'wb']) {
      const port = await freePort();
      const child = start(['-m', 'rondo', 'run', path.join(ROOT, 'tests', 'helpers', 'openapi_fleet_app.py'),
        '--http', `127.0.0.1:${port}`, '--worker-id', id, '--fleet'],
      // the app imports tests.helpers.openapi_app: the repo root goes on its path
      { OPENAPI_API_URL: api, RONDO_STATE_KEYS: keys, PYTHONPATH: ROOT }, id);
      children.push(child);
      workers.push({ id, url: `http://127.0.0.1:${port}/mcp`, child });
    }
    for (const w of workers) await waitForHttp(w.url, w.child);

    // The balancer: every POST goes to the next worker; what served each tools/call is kept.
    let next = 0;
    const served = [];
    const balancer = async (url, init) => {
      const target = init?.method === 'POST' ? workers[next++ % workers.length] : workers[0];
      const response = await fetch(target.url, init);
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
      if (body?.method === 'tools/call') {
        served.push({ tool: body.params.name, retry: 'requestState' in body.params,
          worker: response.headers.get('rondo-worker') });
      }
      return response;
    };

    const asked = [];
    let answer = { action: 'accept', content: { confirm: true } };
    const client = new Client({ name: 'rondo-openapi-interop', version: '1.0.0' }, {
      versionNegotiation: { mode: { pin: MODERN } },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: true, maxRounds: 4 },
    });
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return answer;
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(workers[0].url), { fetch: balancer }),
      { signal: AbortSignal.timeout(30000) });

    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['away', 'big', 'create_item', 'delete_item', 'get_item', 'leak',
      'list_items', 'login', 'read_file', 'slow', 'upload', 'whoami']);
    const del = tools.find((t) => t.name === 'delete_item');
    assert.equal(del.annotations.destructiveHint, true);
    assert.deepEqual(del.inputSchema.required, ['item_id']);
    console.log('ok tools/list: 12 generated tools with schemas and annotations');

    let result = await client.callTool({ name: 'get_item', arguments: { item_id: 1 } });
    assert.deepEqual(result.structuredContent, { id: 1, name: 'kettle', price: 20, tags: ['home'] });
    result = await client.callTool({ name: 'list_items', arguments: { ids: [1, 2], limit: 5 } });
    assert.deepEqual(result.structuredContent.map((i) => i.id), [1, 2]);
    console.log('ok get_item and list_items: structured results validated by the client');

    result = await client.callTool({ name: 'get_item', arguments: { item_id: 42 } });
    assert.equal(result.isError, true);
    assert.equal(result.content[0].text, 'HTTP 404 Not Found from GET /items/{item_id}: {"detail":"no item 42"}');
    console.log('ok a 404 is a tool error with the status and the body');

    served.length = 0;
    result = await client.callTool({ name: 'delete_item', arguments: { item_id: 1 } });
    assert.ok(!result.isError, result.content?.[0]?.text);
    assert.deepEqual(result.structuredContent, { deleted: 1 });
    assert.equal(asked.length, 1);
    assert.equal(asked[0], `Send this request?\n\nDELETE ${api}/items/1`);
    assert.equal(served.length, 2, JSON.stringify(served));
    assert.deepEqual(served.map((s) => s.retry), [false, true]);
    assert.ok(served.every((s) => s.worker === 'wa' || s.worker === 'wb'), JSON.stringify(served));
    assert.notEqual(served[0].worker, served[1].worker, 'the two rounds ran on two workers');
    console.log(`ok confirmed DELETE across two rounds on two workers (${served[0].worker}, then ${served[1].worker})`);

    result = await client.callTool({ name: 'get_item', arguments: { item_id: 1 } });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /^HTTP 404/);
    console.log('ok the item is gone from the API');

    answer = { action: 'decline' };
    served.length = 0;
    result = await client.callTool({ name: 'delete_item', arguments: { item_id: 2 } });
    assert.equal(result.isError, true);
    assert.equal(result.content[0].text, 'not sent: the user did not confirm DELETE /items/2 (decline)');
    assert.notEqual(served[0].worker, served[1].worker);
    result = await client.callTool({ name: 'get_item', arguments: { item_id: 2 } });
    assert.equal(result.structuredContent.name, 'lamp');
    console.log('ok a declined DELETE sends nothing (item 2 still there)');
    await client.close();
  } finally {
    for (const child of children) child.kill('SIGTERM');
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
