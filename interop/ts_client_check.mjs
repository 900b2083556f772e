// The official TypeScript client (@modelcontextprotocol/client 2.4.0, pinned to 2026-07-28)
// drives examples/preferences.py through every workflow, over stdio and over HTTP:
//   tool (favorite_color), resource (prefs://U/color), prompt (color_poem), multi-round
//   (profile), state-only round after a URL elicitation (connect_calendar), a declined answer,
//   and a retry with changed arguments but the old state (rejected with -32602).
// Every leg of a call must use a fresh id, and every requestState the server sent must come
// back byte for byte on the next leg.
//
//   node interop/ts_client_check.mjs            # both transports
//   node interop/ts_client_check.mjs --stdio    # or --http
//
// Needs interop/node_modules (npm ci in interop/) and the repository's .venv. Exit 0 = all ok.
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { EXAMPLE, PYTHON, freePort, waitForHttp } from './support.mjs';

const MODERN = '2026-07-28';

// The wire as the client saw it: requests sent, and responses received, by id.
function spy(transport) {
  const sent = [];
  const received = new Map();
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(structuredClone(message));
    return send(message, options);
  };
  return {
    sent,
    received,
    hook() {
      const onmessage = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (message.id !== undefined) received.set(message.id, structuredClone(message));
        return onmessage?.(message, extra);
      };
    },
  };
}

// Every leg of one logical call: fresh ids, state echoed byte for byte, same arguments.
function checkLegs(wire, legs, expected) {
  assert.equal(legs.length, expected, `${expected} legs expected, saw ${legs.length}`);
  const ids = legs.map((m) => m.id);
  assert.equal(new Set(ids).size, ids.length, `ids must be fresh per leg: ${ids}`);
  assert.equal(legs[0].params.requestState, undefined, 'the first leg carries no requestState');
  assert.equal(legs[0].params.inputResponses, undefined, 'the first leg carries no inputResponses');
  for (let i = 1; i < legs.length; i += 1) {
    const previous = wire.received.get(legs[i - 1].id);
    assert.ok(previous, `no response seen for leg ${i - 1}`);
    assert.equal(previous.result.resultType, 'input_required');
    const state = previous.result.requestState;
    if (state === undefined) {
      assert.equal(legs[i].params.requestState, undefined, 'no state sent, none echoed');
    } else {
      assert.equal(typeof legs[i].params.requestState, 'string');
      assert.ok(legs[i].params.requestState === state, `leg ${i} must echo requestState byte for byte`);
    }
    assert.deepEqual(legs[i].params.arguments, legs[0].params.arguments, 'the retry repeats the arguments');
    assert.equal(legs[i].params._meta['io.modelcontextprotocol/protocolVersion'], MODERN);
  }
}

async function run(transport) {
  let colorAnswer = { action: 'accept', content: { color: 'green' } };
  const asked = [];
  const client = new Client(
    { name: 'rondo-ts-interop', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: MODERN } },
      capabilities: { elicitation: { form: {}, url: {} } },
      inputRequired: { autoFulfill: true, maxRounds: 10 },
    },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params);
    if (request.params.mode === 'url') return { action: 'accept' };
    if (request.params.requestedSchema?.properties?.size) return { action: 'accept', content: { size: 'medium' } };
    return colorAnswer;
  });
  const wire = spy(transport);
  await client.connect(transport, { signal: AbortSignal.timeout(30000) });
  wire.hook();
  const done = [];
  const legsOf = (method, key, value) => wire.sent.filter((m) => m.method === method && m.params?.[key] === value);
  try {
    assert.equal(client.getProtocolEra(), 'modern');

    let result = await client.callTool({ name: 'favorite_color', arguments: { user: 'ann' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'ann likes green.' }]);
    const colorLegs = wire.sent.filter((m) => m.method === 'tools/call' && m.params.arguments?.user === 'ann');
    checkLegs(wire, colorLegs, 2);
    assert.deepEqual(colorLegs[1].params.inputResponses, { color: { action: 'accept', content: { color: 'green' } } });
    assert.equal(asked.at(-1).message, 'Which color do you like, ann?');
    done.push('tool favorite_color (2 legs)');

    const read = await client.readResource({ uri: 'prefs://bea/color' });
    assert.equal(read.contents[0].text, 'bea likes green.');
    assert.equal(read.contents[0].mimeType, 'text/plain');
    checkLegs(wire, legsOf('resources/read', 'uri', 'prefs://bea/color'), 2);
    done.push('resource prefs://{user}/color (2 legs)');

    const prompt = await client.getPrompt({ name: 'color_poem', arguments: { user: 'cy' } });
    assert.equal(prompt.messages.length, 1);
    assert.equal(prompt.messages[0].role, 'user');
    assert.equal(prompt.messages[0].content.text, 'Write a short poem for cy about the color green.');
    checkLegs(wire, legsOf('prompts/get', 'name', 'color_poem'), 2);
    done.push('prompt color_poem (2 legs)');

    result = await client.callTool({ name: 'profile', arguments: { user: 'dee' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'dee: color green, size medium.' }]);
    const profileLegs = wire.sent.filter((m) => m.method === 'tools/call' && m.params.arguments?.user === 'dee');
    checkLegs(wire, profileLegs, 3);
    assert.ok(profileLegs[1].params.requestState, 'round 1 sent a requestState');
    assert.notEqual(profileLegs[2].params.requestState, profileLegs[1].params.requestState, 'round 2 sent a new state');
    done.push('multi-round profile (3 legs, two states echoed)');

    result = await client.callTool({ name: 'connect_calendar', arguments: { user: 'eve' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Calendar connected for eve.' }]);
    const calendarLegs = wire.sent.filter((m) => m.method === 'tools/call' && m.params.arguments?.user === 'eve');
    checkLegs(wire, calendarLegs, 3);
    const stateOnly = wire.received.get(calendarLegs[1].id).result;
    assert.equal(stateOnly.inputRequests, undefined, 'round 2 is state-only');
    assert.equal(calendarLegs[2].params.inputResponses, undefined, 'nothing to answer in a state-only round');
    assert.equal(asked.at(-1).url, 'https://calendar.example.com/connect?user=eve');
    done.push('URL elicitation then a state-only round (3 legs)');

    colorAnswer = { action: 'decline' };
    result = await client.callTool({ name: 'favorite_color', arguments: { user: 'fay' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'fay did not pick a color.' }]);
    done.push('declined answer');
    colorAnswer = { action: 'accept', content: { color: 'blue' } };

    const interim = await client.callTool(
      { name: 'profile', arguments: { user: 'gus' } },
      { allowInputRequired: true },
    );
    assert.equal(interim.resultType, 'input_required');
    assert.ok(interim.requestState, 'profile round 1 carries a state');
    await assert.rejects(
      client.callTool({
        name: 'profile',
        arguments: { user: 'someone-else' },
        inputResponses: { color: { action: 'accept', content: { color: 'blue' } } },
        requestState: interim.requestState,
      }),
      (err) => err?.code === -32602,
      'a retry with changed arguments and the old state is rejected with -32602',
    );
    done.push('changed arguments with the old state rejected (-32602)');
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
  return run(new StdioClientTransport({
    command: PYTHON,
    args: [EXAMPLE, '--stdio'],
    env: { ...process.env },
    stderr: 'pipe',
  }));
}

const wanted = process.argv.slice(2);
const all = wanted.length === 0;
let failed = false;
for (const [name, fn] of [['stdio', overStdio], ['http', overHttp]]) {
  if (!all && !wanted.includes(`--${name}`)) continue;
  try {
    for (const line of await fn()) console.log(`ok   TS client -> preferences.py ${name}: ${line}`);
  } catch (err) {
    failed = true;
    console.log(`FAIL TS client -> preferences.py ${name}: ${err?.stack ?? err}`);
  }
}
process.exit(failed ? 1 : 0);
