// The official TypeScript client (@modelcontextprotocol/client 2.4.0) walks server-everything's
// interactive tools through `rondo proxy --bridge MODE` (interop/bridge_everything_check.py
// starts them), on one era:
//   node interop/bridge_everything_ts.mjs --era modern|legacy URL
// Modern pins 2026-07-28: the bridge's input_required rounds are fulfilled by the client's own
// handlers (autoFulfill); legacy is its 2025-era handshake (the proxy asks over the session).
// Prints one line per check; exit 0 when all pass.
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [, , flag, era, url] = process.argv;
assert.equal(flag, '--era');
const text = (result) => result.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');

const options = { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } };
if (era === 'modern') {
  options.versionNegotiation = { mode: { pin: '2026-07-28' } };
  options.inputRequired = { autoFulfill: true, maxRounds: 5 };
}
const client = new Client({ name: 'rondo-bridge-everything', version: '1.0.0' }, options);
const asked = [];
client.setRequestHandler('elicitation/create', async (request) => {
  asked.push('elicitation/create');
  assert.equal(request.params.message, 'Please provide inputs for the following fields:');
  return { action: 'accept', content: { name: 'Katherine Johnson', check: true } };
});
client.setRequestHandler('sampling/createMessage', async () => {
  asked.push('sampling/createMessage');
  return { role: 'assistant', content: { type: 'text', text: 'Lisbon.' }, model: 'ts-model', stopReason: 'endTurn' };
});
client.setRequestHandler('roots/list', async () => {
  asked.push('roots/list');
  return { roots: [{ uri: 'file:///ts/root', name: 'ts' }] };
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)), { signal: AbortSignal.timeout(30000) });
try {
  const seen = client.getProtocolEra?.() ?? 'legacy';
  assert.equal(seen, era, `client era ${seen}`);
  let got = text(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
  assert.ok(got.includes('- Name: Katherine Johnson'), got);
  console.log('ok trigger-elicitation-request completed (Name: Katherine Johnson)');
  got = text(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'Capital of Portugal?', maxTokens: 20 } }));
  assert.ok(got.includes('Lisbon.'), got);
  console.log('ok trigger-sampling-request completed (sampled: Lisbon.)');
  got = text(await client.callTool({ name: 'get-roots-list', arguments: {} }));
  assert.ok(got.includes('file:///ts/root'), got);
  console.log('ok get-roots-list completed (the client\'s root listed)');
  for (const method of ['elicitation/create', 'sampling/createMessage', 'roots/list']) {
    assert.ok(asked.includes(method), `the client was never asked ${method}: ${asked}`);
  }
  console.log(`ok the client's own handlers answered: ${[...new Set(asked)].join(', ')}`);
} finally {
  await client.close();
}
