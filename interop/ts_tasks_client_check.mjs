// The official tasks client (@modelcontextprotocol/ext-tasks 0.2.2 over @modelcontextprotocol/client
// 2.4.0, pinned) against rondo's conformance fixture (conformance/server.py) over HTTP:
//   - confirm_delete: a task that asks while it runs; the package answers through tasks/update
//   - test_tool_with_task: an MRTR round before the task, then the task (composition)
//   - slow_compute: a long task cancelled by the package (tasks/cancel), settling `cancelled`
//   - failing_job: a tool error is a completed task with isError
// The package needs a host-owned raw dispatch for 2026-07-28 task traffic; this one POSTs each
// request with the standard headers (Mcp-Name = the tool name or the task id).
//
//   node interop/ts_tasks_client_check.mjs
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { PYTHON, ROOT, freePort, waitForHttp } from './support.mjs';

const MODERN = '2026-07-28';
const INFO = { name: 'rondo-ext-tasks-interop', version: '1.0.0' };
const CAPS = { elicitation: { form: {} } };

function nameOf(request) {
  const params = request.params ?? {};
  if (request.method === 'tools/call') return params.name;
  if (request.method.startsWith('tasks/')) return params.taskId;
  return undefined;
}

function rawDispatcher(url, wire) {
  let next = 1;
  return async (request, options = {}) => {
    const message = { jsonrpc: '2.0', id: `raw-${next++}`, ...request };
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': message.method,
      ...(options.context?.headers ?? {}),
    };
    const name = nameOf(message);
    if (name !== undefined) headers['Mcp-Name'] = name;
    wire.push({ method: message.method, headers, params: message.params });
    const reply = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message), signal: options.signal });
    const type = reply.headers.get('content-type') ?? '';
    let response;
    if (type.includes('text/event-stream')) {
      for (const line of (await reply.text()).split('\n')) {
        if (!line.startsWith('data:')) continue;
        const event = JSON.parse(line.slice(5));
        if (event.id === message.id) response = event;
      }
    } else {
      response = await reply.json();
    }
    assert.ok(response, `no response to ${message.method}`);
    return response.error ? { kind: 'error', error: response.error } : { kind: 'result', result: response.result };
  };
}

async function main() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const server = spawn(PYTHON, [path.join(ROOT, 'conformance', 'server.py'), '--port', String(port)],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  server.stderr.on('data', (chunk) => { log += chunk; });
  try {
    await waitForHttp(url, server);
    const client = new Client(INFO, { versionNegotiation: { mode: { pin: MODERN } }, capabilities: CAPS });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    assert.deepEqual(client.getServerCapabilities().extensions['io.modelcontextprotocol/tasks'], {});
    const wire = [];
    const asked = [];
    const session = createTaskSessionFromClient(client, {
      endpointId: 'rondo-interop',
      rawDispatch: rawDispatcher(url, wire),
      v2RequestFraming: { protocolVersion: MODERN, clientInfo: INFO, clientCapabilities: CAPS },
      onInputRequest: async (request, context) => {
        asked.push({ message: request.params.message, delivery: context.delivery, scope: context.scope });
        const field = Object.keys(request.params.requestedSchema.properties)[0];
        return { action: 'accept', content: { [field]: field === 'confirm' ? true : 'Alice' } };
      },
    });
    try {
      // 1. An in-task question, answered through tasks/update.
      const deletion = await session.callTool('confirm_delete', { filename: 'notes.txt' });
      assert.equal(deletion.kind, 'task');
      const deleted = resultFromTaskOutcome((await deletion.settle()).outcome);
      assert.equal(deleted.content[0].text, 'Deleted notes.txt.');
      assert.deepEqual(asked.map((a) => a.delivery), ['task-update']);
      const update = wire.find((w) => w.method === 'tasks/update');
      assert.ok(update, 'the package answered with tasks/update');
      assert.equal(update.headers['Mcp-Name'], update.params.taskId);
      assert.deepEqual(Object.keys(update.params.inputResponses), ['confirm']);
      console.log('ok in-task question answered through tasks/update (Mcp-Name = task id)');

      // 2. An MRTR round before the task, then the task; the gathered name reaches the result.
      asked.length = 0;
      const greeting = await session.callTool('test_tool_with_task', {});
      assert.equal(greeting.kind, 'task');
      const greeted = resultFromTaskOutcome((await greeting.settle()).outcome);
      assert.match(greeted.content[0].text, /Alice/);
      assert.deepEqual(asked.map((a) => a.delivery), ['request-retry']);
      console.log('ok MRTR round before the task, gathered answer in the task result');

      // 3. Cancel a long task.
      const slow = await session.callTool('slow_compute', { seconds: 60, label: 'interop' });
      assert.equal(slow.kind, 'task');
      await slow.cancel();
      const settled = await slow.settle();
      assert.equal(settled.outcome.status, 'cancelled');
      assert.ok(wire.some((w) => w.method === 'tasks/cancel'));
      console.log('ok cancel settles cancelled');

      // 4. A tool error is a completed task whose result says isError.
      const failing = await session.callTool('failing_job', {});
      const failed = resultFromTaskOutcome((await failing.settle()).outcome);
      assert.equal(failed.isError, true);
      console.log('ok tool error is a completed task with isError');
    } finally {
      await session.close();
      await client.close();
    }
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
