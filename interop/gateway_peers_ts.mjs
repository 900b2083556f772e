// The official TypeScript client (@modelcontextprotocol/client 2.4.0) walks the proxies that
// interop/gateway_peers_check.py starts (rondo proxy in front of server-everything, an official
// Python SDK server and a FastMCP server), on one era:
//   node interop/gateway_peers_ts.mjs --era modern|legacy '{"everything": URL, ...}'
// Modern pins 2026-07-28 (input_required rounds auto-fulfilled by its elicitation handler);
// legacy is its default 2025-era handshake (the proxy asks over the session). Prints one JSON
// line per check; exit 0 when all pass.
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [, , flag, era, fronts] = process.argv;
assert.equal(flag, '--era');
const urls = JSON.parse(fronts);

const text = (result) => result.content.filter((b) => b.type === 'text').map((b) => b.text).join('');

async function walk(name, url) {
  const options = { capabilities: { elicitation: { form: {} } } };
  if (era === 'modern') {
    options.versionNegotiation = { mode: { pin: '2026-07-28' } };
    options.inputRequired = { autoFulfill: true, maxRounds: 5 };
  }
  const client = new Client({ name: 'rondo-gateway-peers', version: '1.0.0' }, options);
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { color: 'teal' } }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)), { signal: AbortSignal.timeout(30000) });
  const checks = [];
  try {
    const seen = client.getProtocolEra?.() ?? 'legacy';
    assert.equal(seen, era, `client era ${seen}`);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    if (name === 'everything') {
      assert.ok(tools.includes('echo') && tools.includes('get-sum'), tools.join());
      assert.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'hi' } })), 'Echo: hi');
      assert.equal(text(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })), 'The sum of 2 and 3 is 5.');
      const { resources } = await client.listResources();
      assert.ok(resources.length > 0, 'no resources');
      const read = await client.readResource({ uri: resources[0].uri });
      assert.ok(read.contents.length > 0, 'empty read');
      const prompt = await client.getPrompt({ name: 'simple-prompt' });
      assert.equal(prompt.messages[0].content.text, 'This is a simple prompt without arguments.');
      checks.push(`tools/list (${tools.length}), echo, get-sum, resources/read ${resources[0].uri}, prompts/get simple-prompt`);
    } else {
      assert.ok(tools.includes('add') && tools.includes('ask_color'), tools.join());
      assert.equal(text(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })), '5');
      assert.equal(text(await client.callTool({ name: 'ask_color', arguments: {} })), 'teal');
      const how = era === 'modern' ? 'input_required relayed' : 'asked over the session by the proxy';
      checks.push(`tools/list, add, ask_color (${how}, answered)`);
    }
  } finally {
    await client.close();
  }
  return checks;
}

for (const [name, url] of Object.entries(urls)) {
  for (const check of await walk(name, url)) console.log(JSON.stringify({ upstream: name, check }));
}
