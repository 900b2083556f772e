// The server the MCP Apps browser test hosts (tests/helpers/apps_view_server.py: a view that
// inlines the official ext-apps App, a view-backed tool, two tools only the view calls, one of
// them asking the user) read and driven by official peers over HTTP:
// - the official TypeScript client (@modelcontextprotocol/client 2.4.0 with ext-apps 2.0.4's
//   constants and schemas), pinned to 2026-07-28 and in its default 2025-11-25 session: the
//   links valid to McpUiToolMetaSchema, the view read as RESOURCE_MIME_TYPE with _meta.ui valid
//   to McpUiResourceMetaSchema, the HTML carrying the official App; then what the view does,
//   as a host would do it for the view: the tool, the view's button tool, and the view's asking
//   call, its question answered (an input_required round on 2026-07-28, an elicitation/create
//   request on 2025-11-25), the final result in the end;
// - the Inspector CLI (@modelcontextprotocol/inspector 2.12.0): tools/list and resources/read.
//
//   node interop/ts_apps_host_check.mjs
import { spawn, execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpUiResourceMetaSchema, McpUiToolMetaSchema } from '@modelcontextprotocol/ext-apps';
import { EXTENSION_ID, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import { PYTHON, ROOT, freePort, waitForHttp } from './support.mjs';

const MODERN = '2026-07-28';
const VIEW = 'ui://orders/view.html';
const UI = { csp: { resourceDomains: ['https://img.example.com'] }, prefersBorder: true };
const INSPECTOR = path.join(ROOT, 'interop/node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js');

async function exercise(url, era) {
  const capabilities = { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } },
                         elicitation: { form: {} } };
  const options = { capabilities, ...(era === MODERN
    ? { versionNegotiation: { mode: { pin: MODERN } }, inputRequired: { autoFulfill: true, maxRounds: 5 } } : {}) };
  const client = new Client({ name: 'rondo-apps-host-interop', version: '1.0.0' }, options);
  const asked = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { name: 'Ada' } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    assert.equal(client.getProtocolEra(), era === MODERN ? 'modern' : 'legacy');
    assert.deepEqual(client.getServerCapabilities().extensions?.[EXTENSION_ID], {});
    const { tools } = await client.listTools();
    const links = Object.fromEntries(tools.map((t) => [t.name, McpUiToolMetaSchema.parse(t._meta.ui)]));
    assert.deepEqual(links, { show_order: { resourceUri: VIEW },
                              price: { resourceUri: VIEW, visibility: ['app'] },
                              place_order: { resourceUri: VIEW, visibility: ['app'] } });
    console.log(`ok ${era}: show_order links ${VIEW}; price and place_order are for the view only`);

    const { contents: [item] } = await client.readResource({ uri: VIEW });
    assert.equal(item.mimeType, RESOURCE_MIME_TYPE);
    assert.deepEqual(McpUiResourceMetaSchema.parse(item._meta.ui), UI);
    assert.match(item.text, /^<!doctype html>/);
    assert.match(item.text, /@modelcontextprotocol\/ext-apps 2\.0\.4 app \*\//);
    console.log(`ok ${era}: the view reads as ${RESOURCE_MIME_TYPE}, _meta.ui valid, the official App inlined`);

    const shown = await client.callTool({ name: 'show_order', arguments: { item: 'tea', quantity: 2 } });
    assert.deepEqual(shown.content, [{ type: 'text', text: '2 x tea' }]);
    const priced = await client.callTool({ name: 'price', arguments: { item: 'tea' } });
    assert.deepEqual(priced.content, [{ type: 'text', text: 'tea costs 3 coins' }]);
    const placed = await client.callTool({ name: 'place_order', arguments: { item: 'tea' } });
    assert.deepEqual(placed.content, [{ type: 'text', text: 'tea ships to Ada' }]);
    assert.deepEqual(asked, ['Ship the tea to whom?']);
    console.log(`ok ${era}: the tool, the view's button tool, and the view's asking call answered once`);
  } finally {
    await client.close();
  }
}

function inspector(url, ...args) {
  // the CLI's real path: it runs only when argv[1] is its own file (not a symlinked node_modules)
  return JSON.parse(execFileSync(process.execPath, [realpathSync(INSPECTOR), url, ...args],
                                 { encoding: 'utf8', timeout: 60000 }));
}

async function main() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const server = spawn(PYTHON, [path.join(ROOT, 'tests', 'helpers', 'apps_view_server.py'), '--port', String(port)],
    { stdio: ['ignore', 'ignore', 'pipe'], cwd: ROOT, env: { ...process.env, PYTHONPATH: ROOT } });
  let log = '';
  server.stderr.on('data', (chunk) => { log += chunk; });
  try {
    await waitForHttp(url, server);
    await exercise(url, MODERN);
    await exercise(url, '2025-11-25');
    const listed = Object.fromEntries(inspector(url, '--method', 'tools/list').tools.map((t) => [t.name, t._meta]));
    assert.deepEqual(listed.show_order, { ui: { resourceUri: VIEW }, 'ui/resourceUri': VIEW });
    assert.deepEqual(listed.place_order.ui, { resourceUri: VIEW, visibility: ['app'] });
    const { contents: [item] } = inspector(url, '--method', 'resources/read', '--uri', VIEW);
    assert.equal(item.mimeType, RESOURCE_MIME_TYPE);
    assert.deepEqual(item._meta.ui, UI);
    assert.match(item.text, /@modelcontextprotocol\/ext-apps 2\.0\.4 app \*\//);
    console.log('ok inspector: the links (nested and flat) and the view with its _meta.ui');
  } catch (error) {
    console.error(log.slice(-3000));
    throw error;
  } finally {
    server.kill('SIGTERM');
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
