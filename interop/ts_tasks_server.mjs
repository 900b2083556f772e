// A small 2026-07-28 tasks server written with @modelcontextprotocol/ext-tasks 0.2.2 (its V2
// guards check every tasks request that comes in and every task shape that goes out), for
// rondo's client to drive (interop/rondo_tasks_check.py). Plain node:http, JSON responses.
//   node interop/ts_tasks_server.mjs PORT
// Tools: `archive {folder}` is a task that asks to confirm while it runs (inputRequests, then
// tasks/update); `hang` is a task that runs until tasks/cancel. Anything the guards refuse is
// answered -32602 and logged as "GUARD", so the check fails loudly.
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import {
  hasTaskClientCapabilityV2, isCancelTaskRequestV2, isCreateTaskResultV2, isDetailedTaskV2,
  isGetTaskRequestV2, isUpdateTaskRequestV2,
} from '@modelcontextprotocol/ext-tasks/core/v2';

const PORT = Number(process.argv[2]);
const EXT = 'io.modelcontextprotocol/tasks';
const tasks = new Map();
const now = () => new Date().toISOString();

const TOOLS = [
  { name: 'archive', description: 'Archive a folder (a task; asks to confirm)',
    inputSchema: { type: 'object', properties: { folder: { type: 'string' } }, required: ['folder'] } },
  { name: 'hang', description: 'Runs until cancelled (a task)', inputSchema: { type: 'object', properties: {} } },
];

class RpcError extends Error {
  constructor(code, message, data) { super(message); this.code = code; this.data = data; }
}

function guard(ok, what, value) {
  if (!ok) {
    console.error('GUARD', what, JSON.stringify(value));
    throw new RpcError(-32602, `ext-tasks guard refused ${what}`);
  }
}

function view(task) {
  const out = { taskId: task.taskId, status: task.status, createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt, ttlMs: 60000, pollIntervalMs: 50 };
  if (task.statusMessage) out.statusMessage = task.statusMessage;
  return out;
}

function detailed(task) {
  const out = view(task);
  if (task.status === 'input_required') out.inputRequests = task.inputRequests;
  if (task.status === 'completed') out.result = task.result;
  return out;
}

function set(task, fields) { Object.assign(task, fields, { lastUpdatedAt: now() }); }

function start(name, args) {
  const task = { taskId: randomBytes(18).toString('base64url'), status: 'working', createdAt: now(),
    lastUpdatedAt: now(), statusMessage: `starting ${name}` };
  tasks.set(task.taskId, task);
  if (name === 'archive') {
    setTimeout(() => set(task, { status: 'input_required', statusMessage: 'waiting for confirmation',
      inputRequests: { 'confirm-1': { method: 'elicitation/create', params: { mode: 'form',
        message: `Archive ${args.folder}?`, requestedSchema: { type: 'object',
          properties: { confirm: { type: 'boolean' } }, required: ['confirm'] } } } } }), 100);
    task.onAnswers = (responses) => {
      const answer = responses['confirm-1'];
      if (!answer) return;
      set(task, { status: 'working', statusMessage: 'archiving', inputRequests: undefined });
      const yes = answer.action === 'accept' && answer.content?.confirm === true;
      setTimeout(() => set(task, { status: 'completed', statusMessage: 'done', result: {
        resultType: 'complete', isError: false,
        content: [{ type: 'text', text: yes ? `archived ${args.folder}` : `kept ${args.folder}` }] } }), 100);
    };
  }
  return task;
}

function handle(message, headers) {
  const { method, params = {} } = message;
  if (method === 'server/discover') {
    return { resultType: 'complete', supportedVersions: ['2026-07-28'], ttlMs: 0, cacheScope: 'private',
      capabilities: { tools: {}, extensions: { [EXT]: {} } } };
  }
  if (method === 'tools/list') return { resultType: 'complete', tools: TOOLS, ttlMs: 0, cacheScope: 'private' };
  if (method === 'tools/call') {
    if (!TOOLS.some((t) => t.name === params.name)) throw new RpcError(-32602, `Unknown tool: ${params.name}`);
    if (!hasTaskClientCapabilityV2(params)) {
      throw new RpcError(-32021, 'Missing required client capability', { requiredCapabilities: { extensions: { [EXT]: {} } } });
    }
    const created = { resultType: 'task', ...view(start(params.name, params.arguments ?? {})) };
    guard(isCreateTaskResultV2(created), 'CreateTaskResult', created);
    return created;
  }
  if (method.startsWith('tasks/')) {
    if (!hasTaskClientCapabilityV2(params)) {
      throw new RpcError(-32021, 'Missing required client capability', { requiredCapabilities: { extensions: { [EXT]: {} } } });
    }
    if (headers['mcp-name'] !== params.taskId) throw new RpcError(-32020, 'Mcp-Name must be the task id');
    const task = tasks.get(params.taskId);
    if (method === 'tasks/get') {
      guard(isGetTaskRequestV2(message), 'GetTaskRequest', message);
      if (!task) throw new RpcError(-32602, 'Task not found');
      const out = detailed(task);
      guard(isDetailedTaskV2(out), 'DetailedTask', out);
      return { resultType: 'complete', ...out };
    }
    if (method === 'tasks/update') {
      guard(isUpdateTaskRequestV2(message), 'UpdateTaskRequest', message);
      if (!task) throw new RpcError(-32602, 'Task not found');
      task.onAnswers?.(params.inputResponses);
      return { resultType: 'complete' };
    }
    if (method === 'tasks/cancel') {
      guard(isCancelTaskRequestV2(message), 'CancelTaskRequest', message);
      if (!task) throw new RpcError(-32602, 'Task not found');
      if (!['completed', 'failed', 'cancelled'].includes(task.status)) set(task, { status: 'cancelled', statusMessage: 'cancelled' });
      return { resultType: 'complete' };
    }
  }
  throw new RpcError(-32601, `Method not found: ${method}`);
}

createServer((req, res) => {
  if (req.method !== 'POST') { res.writeHead(405).end(); return; }
  let body = '';
  req.on('data', (chunk) => { body += chunk; });
  req.on('end', () => {
    const message = JSON.parse(body);
    if (message.id === undefined) { res.writeHead(202).end(); return; }
    let reply;
    try {
      reply = { jsonrpc: '2.0', id: message.id, result: handle(message, req.headers) };
    } catch (error) {
      if (!(error instanceof RpcError)) console.error(error);
      const code = error instanceof RpcError ? error.code : -32603;
      reply = { jsonrpc: '2.0', id: message.id, error: { code, message: error.message, ...(error.data ? { data: error.data } : {}) } };
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(reply));
  });
}).listen(PORT, '127.0.0.1', () => console.error(`tasks server on ${PORT}`));
