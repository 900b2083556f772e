// The official TypeScript client (@modelcontextprotocol/client 2.4.0) with the official MCP Apps
// package (@modelcontextprotocol/ext-apps 2.0.4: its constants and zod schemas), both pinned in
// interop/package.json, reads rondo's views: tests/helpers/apps_server.py over HTTP, once pinned
// to 2026-07-28 and once in the client's default legacy mode (a 2025-11-25 session). For each era:
// the extension is advertised, tools carry the link (nested and flat) valid to McpUiToolMetaSchema,
// the view is listed and read with RESOURCE_MIME_TYPE and its _meta.ui valid to
// McpUiResourceMetaSchema on both the listing and the content item, and the tool answers text.
//
//   node interop/ts_apps_client_check.mjs
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpUiResourceMetaSchema, McpUiToolMetaSchema } from '@modelcontextprotocol/ext-apps';
import { EXTENSION_ID, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY, getUiCapability } from '@modelcontextprotocol/ext-apps/server';
import { PYTHON, ROOT, freePort, waitForHttp } from './support.mjs';

const MODERN = '2026-07-28';
const INFO = { name: 'rondo-apps-interop', version: '1.0.0' };
const VIEW = 'ui://orders/table';
const UI = { csp: { connectDomains: ['https://api.example.com'] }, prefersBorder: true };

async function exercise(url, era) {
  const capabilities = { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };
  assert.deepEqual(getUiCapability(capabilities), { mimeTypes: [RESOURCE_MIME_TYPE] });
  const options = { capabilities, ...(era === MODERN ? { versionNegotiation: { mode: { pin: MODERN } } } : {}) };
  const client = new Client(INFO, options);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    assert.deepEqual(client.getServerCapabilities().extensions?.[EXTENSION_ID], {});
    console.log(`ok ${era}: the server advertises ${EXTENSION_ID}`);

    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    const orders = byName.orders._meta;
    assert.deepEqual(McpUiToolMetaSchema.parse(orders.ui), { resourceUri: VIEW });
    assert.equal(orders[RESOURCE_URI_META_KEY], VIEW);
    const confirm = McpUiToolMetaSchema.parse(byName.confirm._meta.ui);
    assert.deepEqual(confirm.visibility, ['app']);
    console.log(`ok ${era}: tools link ${VIEW} (_meta.ui and ${RESOURCE_URI_META_KEY}), confirm is app-only`);

    const { resources } = await client.listResources();
    const listed = resources.find((r) => r.uri === VIEW);
    assert.equal(listed.mimeType, RESOURCE_MIME_TYPE);
    assert.deepEqual(McpUiResourceMetaSchema.parse(listed._meta.ui), UI);
    const { contents } = await client.readResource({ uri: VIEW });
    assert.equal(contents.length, 1);
    assert.equal(contents[0].mimeType, RESOURCE_MIME_TYPE);
    assert.match(contents[0].text, /^<!doctype html>/);
    assert.deepEqual(McpUiResourceMetaSchema.parse(contents[0]._meta.ui), UI);
    console.log(`ok ${era}: the view reads as ${RESOURCE_MIME_TYPE} with its _meta.ui on listing and content`);

    const result = await client.callTool({ name: 'orders', arguments: {} });
    assert.deepEqual(result.content, [{ type: 'text', text: '2 orders' }]);
    console.log(`ok ${era}: the view-backed tool answers text content`);
  } finally {
    await client.close();
  }
}

async function main() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const server = spawn(PYTHON, [path.join(ROOT, 'tests', 'helpers', 'apps_server.py'), '--port', String(port)],
    { stdio: ['ignore', 'ignore', 'pipe'], cwd: ROOT, env: { ...process.env, PYTHONPATH: ROOT } });
  let log = '';
  server.stderr.on('data', (chunk) => { log += chunk; });
  try {
    await waitForHttp(url, server);
    await exercise(url, MODERN);
    await exercise(url, '2025-11-25');
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
