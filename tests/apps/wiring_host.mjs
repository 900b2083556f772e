// A scripted host for rondo's view wiring (src/rondo/apps/wiring.js), in Node with no browser:
// it runs the page's inline script against a stub window whose parent records every message the
// view posts, plays the host's side of MCP Apps, and prints what happened as JSON.
//   node tests/apps/wiring_host.mjs page.html
import { readFileSync } from "node:fs";

const html = readFileSync(process.argv[2], "utf8");
const script = [...html.matchAll(/<script>\n([\s\S]*?)\n<\/script>/g)].map((m) => m[1]).join("\n");
const posted = [], events = [], listeners = [];
const parent = { postMessage: (message, origin) => posted.push({ message, origin }) };
const stranger = {};
const window = {
  parent,
  addEventListener: (type, fn) => { if (type === "message") listeners.push(fn); },
  ResizeObserver: class { observe() {} },
};
const document = { documentElement: { scrollWidth: 320.4, scrollHeight: 200 } };
globalThis.record = (kind, value) => events.push([kind, value]);
const send = (data, source = parent) => listeners.forEach((fn) => fn({ source, data }));
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const last = () => posted[posted.length - 1].message;

new Function("window", "document", "ResizeObserver", script)(window, document, window.ResizeObserver);
const init = posted[0].message;
// The host must not talk before `initialized`; a stranger's message must be ignored.
send({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { item: "forged" } } }, stranger);
send({ jsonrpc: "2.0", id: init.id, result: { protocolVersion: "2026-01-26",
  hostInfo: { name: "test-host", version: "1" }, hostCapabilities: {}, hostContext: { theme: "dark" } } });
await tick();
send({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { theme: "light" } });
send({ jsonrpc: "2.0", method: "ui/notifications/tool-input-partial", params: { arguments: { item: "te" } } });
send({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { item: "tea" } } });
send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: {
  content: [{ type: "text", text: "[{\"id\":1}]" }], structuredContent: { rows: [{ id: 1 }] } } });
await tick();
const call = last();
send({ jsonrpc: "2.0", id: call.id, result: { content: [{ type: "text", text: "3 EUR" }] } });
await tick();
const second = last();
send({ jsonrpc: "2.0", id: second.id, error: { code: -32602, message: "Unknown tool: nope" } });
await tick();
send({ jsonrpc: "2.0", method: "ui/notifications/tool-cancelled", params: { reason: "user stopped it" } });
send({ jsonrpc: "2.0", id: 99, method: "ping" });
send({ jsonrpc: "2.0", id: 100, method: "ui/resource-teardown", params: { reason: "done" } });
send({ jsonrpc: "2.0", id: 101, method: "sampling/createMessage", params: {} });
await tick();
await tick();
console.log(JSON.stringify({ posted: posted.map((p) => p.message), origins: [...new Set(posted.map((p) => p.origin))], events }));
