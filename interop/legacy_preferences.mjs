// The official TypeScript client (@modelcontextprotocol/client, default legacy mode: a 2025-era
// `initialize` handshake) walks every flow of examples/preferences.py, over HTTP (Mcp-Session-Id
// session, SSE) and over stdio: the tool, the resource and the prompt (ctx.ask), two questions one
// after the other (profile), a URL elicitation followed by an explicit state-only InputRequired
// round (connect_calendar), and a declined answer. rondo must send each question as an
// elicitation/create server-to-client request and finish the call with the answers: one request
// per call, never a retry.
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


// Every flow through the client; returns what the wire showed.
async function run(transport) {
  const client = new Client(
    { name: 'rondo-legacy-interop', version: '1.0.0' },
    { capabilities: { elicitation: { form: {}, url: {} } } },
  );
  const asked = [];
  let colorAnswer = { action: 'accept', content: { color: 'green' } };
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params);
    if (request.params.mode === 'url') return { action: 'accept' };
    if (request.params.requestedSchema?.properties?.size) return { action: 'accept', content: { size: 'medium' } };
    return colorAnswer;
  });
  const sent = [];
  const originalSend = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(structuredClone(message));
    return originalSend(message, options);
  };
  await client.connect(transport, { signal: AbortSignal.timeout(30000) });
  const done = [];
  const oneRequest = (method, key, value) => {
    const legs = sent.filter((m) => m.method === method && (m.params?.[key] === value || m.params?.arguments?.user === value));
    assert.equal(legs.length, 1, `one ${method}: the answers came over the back-channel, not a retry`);
    assert.equal(legs[0].params._meta?.['io.modelcontextprotocol/protocolVersion'], undefined);
  };
  try {
    const era = client.getProtocolEra?.();
    const init = sent.find((m) => m.method === 'initialize');
    assert.ok(init, 'the client opened with initialize (legacy mode)');
    assert.ok(era === undefined || era === 'legacy', `era is ${era}`);
    done.push(`initialize, legacy ${init.params.protocolVersion}`);

    let result = await client.callTool({ name: 'favorite_color', arguments: { user: 'ann' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'ann likes green.' }]);
    assert.equal(asked.length, 1, 'exactly one elicitation/create reached the client');
    assert.equal(asked[0].message, 'Which color do you like, ann?');
    assert.deepEqual(asked[0].requestedSchema.required, ['color']);
    const answers = sent.filter((m) => m.method === undefined && 'result' in m);
    assert.equal(answers.length, 1, 'the client answered the server request once');
    oneRequest('tools/call', 'name', 'ann');
    done.push('tool favorite_color (ctx.ask over the back-channel)');

    const read = await client.readResource({ uri: 'prefs://bea/color' });
    assert.equal(read.contents[0].text, 'bea likes green.');
    oneRequest('resources/read', 'uri', 'prefs://bea/color');
    done.push('resource prefs://{user}/color');

    const prompt = await client.getPrompt({ name: 'color_poem', arguments: { user: 'cy' } });
    assert.equal(prompt.messages[0].content.text, 'Write a short poem for cy about the color green.');
    oneRequest('prompts/get', 'name', 'color_poem');
    done.push('prompt color_poem');

    const before = asked.length;
    result = await client.callTool({ name: 'profile', arguments: { user: 'dee' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'dee: color green, size medium.' }]);
    assert.equal(asked.length - before, 2, 'two questions, one after the other');
    oneRequest('tools/call', 'name', 'dee');
    done.push('profile: two questions in one call');

    const beforeUrl = asked.length;
    result = await client.callTool({ name: 'connect_calendar', arguments: { user: 'eve' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Calendar connected for eve.' }]);
    assert.equal(asked.length - beforeUrl, 1, 'the consent was asked once; the state-only round ran in-process');
    assert.equal(asked.at(-1).mode, 'url');
    assert.equal(asked.at(-1).url, 'https://calendar.example.com/connect?user=eve');
    assert.equal(typeof asked.at(-1).elicitationId, 'string');
    oneRequest('tools/call', 'name', 'eve');
    done.push('connect_calendar: URL elicitation, then an explicit state-only InputRequired');

    colorAnswer = { action: 'decline' };
    result = await client.callTool({ name: 'favorite_color', arguments: { user: 'fay' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'fay did not pick a color.' }]);
    done.push('declined answer');
    return done;
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
    for (const line of await fn()) console.log(`ok   TS client (legacy) -> preferences.py ${name}: ${line}`);
  } catch (err) {
    failed = true;
    console.log(`FAIL ${name}: ${err?.stack ?? err}`);
  }
}
process.exit(failed ? 1 : 0);
