"""The page `rondo dev` serves: one HTML file with its script and style inline (no build step,
no CDN, nothing fetched but the endpoint's own API)."""

PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rondo dev</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#222}
header{background:#223;color:#fff;padding:10px 16px}header b{font-size:16px}
main{display:grid;grid-template-columns:1fr 380px;gap:16px;padding:16px}
section.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px 12px;margin-bottom:12px}
h2{font-size:15px;margin:18px 0 8px}h3{margin:0 0 4px;font-size:14px}
.desc{color:#555;margin:0 0 6px}.field{margin:6px 0}.field label{display:block;font-weight:600}
.hint{color:#777;font-weight:400}.err{color:#b00020;font-size:12px;min-height:0}
input[type=text],input[type=number],textarea,select{width:100%;box-sizing:border-box;padding:4px}
button{margin:6px 6px 0 0;padding:4px 10px;cursor:pointer}
pre{background:#f1f1ee;padding:6px;white-space:pre-wrap;word-break:break-word;margin:4px 0}
.error pre{background:#fde8ea;color:#900}#asks section{border-color:#c90;background:#fffbe6}
#timeline li{margin:2px 0;font-size:12px}.banner{padding:8px 16px;background:#fde8ea;display:none}
</style></head><body>
<header><b id="title">rondo dev</b> <span id="subtitle"></span></header>
<div class="banner" id="banner" data-testid="banner"></div>
<main><div id="offer"></div>
<aside><h2>Questions from the server</h2><div id="asks" data-testid="asks"><p class="desc">None waiting.</p></div>
<h2>Tasks</h2><div id="tasks" data-testid="tasks"><p class="desc">None yet.</p></div>
<h2>Timeline</h2><ol id="timeline" data-testid="timeline"></ol></aside></main>
<script>
"use strict";
const secret = new URLSearchParams(location.hash.slice(1)).get("secret") || "";
history.replaceState(null, "", location.pathname);  // the secret leaves the address bar
const $ = (tag, attrs = {}, ...kids) => { const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) { if (k === "text") el.textContent = v; else el.setAttribute(k, v); }
  for (const kid of kids) if (kid) el.append(kid); return el; };
let inflight = 0;
function note(text) { document.getElementById("timeline").append($("li", {text: new Date().toLocaleTimeString() + " " + text})); }
async function api(op, body = {}) {
  const r = await fetch("/api/" + op, {method: "POST", headers: {"content-type": "application/json", "x-rondo-dev-secret": secret}, body: JSON.stringify(body)});
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
  if (data.failed) throw new Error(data.failed);
  return data;
}
// -- forms from JSON Schema --------------------------------------------------------------------
function resolve(prop, defs) {  // a local $ref ("#/$defs/Name"), followed a few levels deep
  for (let i = 0; i < 8 && prop && typeof prop.$ref === "string" && prop.$ref.startsWith("#/$defs/"); i++)
    prop = Object.assign({}, defs[prop.$ref.slice(8)] || {}, {description: prop.description || (defs[prop.$ref.slice(8)] || {}).description});
  return prop || {};
}
function fieldFor(name, prop, required, defs, path) {
  prop = resolve(prop, defs);
  if (prop.type === "object" && prop.properties && (path || "").split(".").length < 6) {
    // A nested object: a fieldset of its own fields, read into an object.
    const inner = formFor(prop, defs, (path ? path + "." : "") + name);
    const box = $("fieldset", {class: "field", "data-field": (path ? path + "." : "") + name},
      $("legend", {text: name + (required ? " *" : "")}), prop.description ? $("div", {class: "desc", text: prop.description}) : null, inner);
    box.read = () => { const v = inner.read(); return Object.keys(v).length || required ? v : undefined; };
    return box;
  }
  const kind = Array.isArray(prop.type) ? prop.type.find(t => t !== "null") : prop.type;
  const hint = [kind || "any", prop.minimum !== undefined ? ">=" + prop.minimum : "", prop.maximum !== undefined ? "<=" + prop.maximum : ""].filter(Boolean).join(" ");
  const label = $("label", {}, name + (required ? " *" : "") + " ", $("span", {class: "hint", text: hint}));
  let input;
  const id = "f-" + name;
  const items = prop.items || {};
  const choices = items.enum ? items.enum.map(v => [v, String(v)]) : (items.anyOf || items.oneOf || []).filter(o => "const" in o).map(o => [o.const, o.title || String(o.const)]);
  if (kind === "array" && choices.length) {  // a multi-select: one checkbox per choice
    input = $("div", {"data-field": name, id, class: "choices"});
    const chosen = new Set((prop.default || []).map(v => JSON.stringify(v)));
    for (const [value, text] of choices) {
      const box = $("input", {type: "checkbox", value: JSON.stringify(value), "data-choice": text});
      box.checked = chosen.has(JSON.stringify(value));
      input.append($("label", {class: "hint"}, box, " " + text + " "));
    }
  } else if (prop.enum || prop.oneOf) {
    const options = prop.enum ? prop.enum.map((v, i) => [v, (prop.enumNames && prop.enumNames[i]) || String(v)]) : prop.oneOf.map(o => [o.const, o.title || String(o.const)]);
    input = $("select", {"data-field": name, id});
    if (!required) input.append($("option", {value: "", text: "(none)"}));
    for (const [value, text] of options) input.append($("option", {value: JSON.stringify(value), text}));
    if (prop.default !== undefined) input.value = JSON.stringify(prop.default);
  } else if (kind === "boolean") {
    input = $("input", {type: "checkbox", "data-field": name, id});
    input.checked = prop.default === true;
  } else if (kind === "integer" || kind === "number") {
    input = $("input", {type: "number", "data-field": name, id, step: kind === "integer" ? "1" : "any"});
    if (prop.minimum !== undefined) input.min = prop.minimum;
    if (prop.maximum !== undefined) input.max = prop.maximum;
    if (prop.default !== undefined) input.value = prop.default;
  } else if (kind === "array" || kind === "object" || kind === undefined) {
    input = $("textarea", {rows: 2, "data-field": name, id, placeholder: kind === "array" ? '["a", "b"]' : '{"key": "value"}'});
    if (prop.default !== undefined) input.value = JSON.stringify(prop.default);
  } else {
    const type = {email: "email", uri: "url", date: "date", "date-time": "datetime-local"}[prop.format] || "text";
    input = $("input", {type, "data-field": name, id});
    if (prop.default !== undefined) input.value = prop.default;
  }
  const box = $("div", {class: "field"}, label, input, prop.description ? $("div", {class: "desc", text: prop.description}) : null, $("div", {class: "err", "data-error": name}));
  box.read = () => {
    const err = box.querySelector(".err"); err.textContent = "";
    let value;
    if (input.classList && input.classList.contains("choices")) {
      value = [...input.querySelectorAll("input:checked")].map(b => JSON.parse(b.value));
      if (prop.minItems !== undefined && value.length < prop.minItems) throw fail(err, "at least " + prop.minItems + " choices");
      if (prop.maxItems !== undefined && value.length > prop.maxItems) throw fail(err, "at most " + prop.maxItems + " choices");
      if (!value.length && !required) value = undefined;
    } else if (input.tagName === "SELECT") { if (input.value === "") value = undefined; else value = JSON.parse(input.value); }
    else if (input.type === "checkbox") value = input.checked;
    else if (input.value.trim() === "") value = undefined;
    else if (input.type === "number") { value = Number(input.value);
      if (kind === "integer" && !Number.isInteger(value)) throw fail(err, "a whole number");
      if (prop.minimum !== undefined && value < prop.minimum) throw fail(err, "at least " + prop.minimum);
      if (prop.maximum !== undefined && value > prop.maximum) throw fail(err, "at most " + prop.maximum); }
    else if (input.tagName === "TEXTAREA") { try { value = JSON.parse(input.value); } catch (e) { throw fail(err, "JSON, e.g. " + input.placeholder); } }
    else { value = input.value;
      if (input.type === "email" && !/^[^@\s]+@[^@\s]+$/.test(value)) throw fail(err, "an email address");
      if (prop.minLength !== undefined && value.length < prop.minLength) throw fail(err, "at least " + prop.minLength + " characters");
      if (prop.maxLength !== undefined && value.length > prop.maxLength) throw fail(err, "at most " + prop.maxLength + " characters"); }
    if (value === undefined && required) throw fail(err, "required");
    return value;
  };
  return box;
}
function fail(err, text) { err.textContent = "Needs " + text + "."; return new Error("invalid"); }
function formFor(schema, defs, path) {
  defs = defs || (schema && schema.$defs) || {};
  const form = $("div", {class: "form"}); const fields = [];
  const props = (schema && schema.properties) || {}; const required = new Set((schema && schema.required) || []);
  for (const [name, prop] of Object.entries(props)) { const f = fieldFor(name, prop || {}, required.has(name), defs, path); fields.push([name, f]); form.append(f); }
  form.read = () => { const out = {}; let bad = false;
    for (const [name, f] of fields) { try { const v = f.read(); if (v !== undefined) out[name] = v; } catch (e) { bad = true; } }
    if (bad) throw new Error("invalid"); return out; };
  return form;
}
// -- results ------------------------------------------------------------------------------------
function showResult(box, result) {
  box.replaceChildren(); box.className = result.isError ? "result error" : "result";
  for (const block of result.content || result.contents || result.messages || []) {
    if (block.type === "image") box.append($("img", {src: "data:" + block.mimeType + ";base64," + block.data, alt: "image"}));
    else if (block.type === "text" || block.text !== undefined) box.append($("pre", {"data-testid": "text", text: block.text}));
    else if (block.type === "resource" && block.resource) box.append($("div", {class: "desc", text: "resource " + block.resource.uri}), $("pre", {"data-testid": "resource", text: block.resource.text !== undefined ? block.resource.text : "(" + (block.resource.mimeType || "binary") + ", " + (block.resource.blob || "").length + " base64 characters)"}));
    else if (block.type === "resource_link") box.append($("pre", {"data-testid": "link", text: "link: " + block.uri + (block.name ? " (" + block.name + ")" : "")}));
    else if (block.role) box.append($("pre", {"data-testid": "text", text: block.role + ": " + (block.content && block.content.text || JSON.stringify(block.content))}));
    else box.append($("pre", {text: JSON.stringify(block, null, 2)}));
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null)
    box.append($("pre", {"data-testid": "structured", text: JSON.stringify(result.structuredContent, null, 2)}));
}
async function run(box, label, op, body) {
  inflight++; note(label + " sent");
  box.replaceChildren($("pre", {text: "waiting..."}));
  try { const result = await api(op, body); showResult(box, result); note(label + (result.isError ? " failed" : " done")); return result; }
  catch (e) { box.className = "result error"; box.replaceChildren($("pre", {text: String(e.message)})); note(label + " failed"); return null; }
  finally { inflight--; }
}
function card(kind, name, description, schema, op, bodyOf, extra) {
  const form = formFor(schema); const out = $("div", {class: "result"});
  const button = $("button", {"data-testid": kind + "-" + name, text: {tool: "Call", resource: "Read", template: "Read", prompt: "Get"}[kind]});
  button.onclick = () => { let values; try { values = form.read(); } catch (e) { return; } const done = run(out, kind + " " + name, op, bodyOf(values)); if (extra) extra.called(values, done); };
  return $("section", {class: "card", "data-card": kind + ":" + name}, $("h3", {text: name}), description ? $("p", {class: "desc", text: description}) : null, form, button, out, extra ? extra.box : null);
}
// -- MCP Apps: a tool's view, hosted through the official bridge (ext-apps' AppBridge) ------------
function viewUri(t) { const m = t._meta || {}; const ui = m.ui || {};
  return typeof ui.resourceUri === "string" ? ui.resourceUri : typeof m["ui/resourceUri"] === "string" ? m["ui/resourceUri"] : null; }
function visibleTo(t, who) { const ui = (t._meta || {}).ui; return (ui && Array.isArray(ui.visibility) ? ui.visibility : ["model", "app"]).includes(who); }
function loadBridge() {
  if (window.McpAppsHost) return Promise.resolve();
  return new Promise((ok, no) => { const s = $("script", {src: "/apps/bridge.js"}); s.onload = ok;
    s.onerror = () => no(new Error("the apps bridge did not load")); document.head.append(s); });
}
const hosted = new Map();  // a card's view box -> its bridge and frame
function viewBox(t, apps) {
  const uri = viewUri(t);
  if (!uri) return null;
  const box = $("div", {class: "view", "data-testid": "view"});
  if (!apps) { box.append($("p", {class: "desc", text: "Has a view (" + uri + "): start rondo dev with --apps-bridge to see it."})); return {box, called() {}}; }
  return {box, called(values, done) { hostView(box, t, values, done).catch(e => { box.replaceChildren($("pre", {class: "error", "data-testid": "view-error", text: e.message})); note("view of " + t.name + " failed: " + e.message); }); }};
}
async function hostView(box, tool, args, called) {
  const old = hosted.get(box);
  if (old) {  // the extension's teardown request first, answered or not within 2 s
    hosted.delete(box);
    const how = await Promise.race([old.bridge.teardownResource({}).then(() => "", (e) => " (the view answered: " + e.message + ")"),
                                    new Promise((ok) => setTimeout(() => ok(" (no answer in 2 s)"), 2000))]);
    old.frame.remove(); note("view " + old.uri + " torn down" + how);
  }
  const view = await api("view", {tool: tool.name});
  const {AppBridge, PostMessageTransport} = window.McpAppsHost;
  const frame = $("iframe", {sandbox: "allow-scripts allow-same-origin allow-forms", "data-testid": "view-frame", "data-view": view.uri,
    title: "view " + view.uri, style: "display:block;width:100%;height:160px;border:" + (view.prefersBorder === false ? "0" : "1px solid #ccc")});
  box.replaceChildren(frame);
  const bridge = new AppBridge(null, {name: "rondo-dev", version: "1"},
    {openLinks: {}, serverTools: {}, serverResources: {}, logging: {}, message: {text: {}}, sandbox: {csp: view.csp}},
    {hostContext: {theme: "light", displayMode: "inline", availableDisplayModes: ["inline"], platform: "web", toolInfo: {tool: view.tool}}});
  hosted.set(box, {bridge, frame, uri: view.uri});
  bridge.oncalltool = async (params) => {  // through the page's client: a question shows here, the view gets the end
    note("view called " + params.name);
    const result = await api("call", {name: params.name, arguments: params.arguments || {}, view: view.id});
    note("view's call of " + params.name + (result.isError ? " failed" : " done"));
    return result;
  };
  bridge.onreadresource = async (params) => api("read", {uri: params.uri, view: view.id});
  bridge.onopenlink = async ({url}) => { window.open(url, "_blank", "noopener"); return {}; };
  bridge.onmessage = async (params) => { note("view says: " + (params.content || []).map(c => c.text || c.type).join(" ")); return {}; };
  bridge.onloggingmessage = (p) => note("[" + p.level + "] view: " + (typeof p.data === "string" ? p.data : JSON.stringify(p.data)));
  bridge.onsizechange = ({height}) => { if (height) frame.style.height = Math.min(Math.ceil(height) + 2, 2000) + "px"; };
  bridge.onsandboxready = () => bridge.sendSandboxResourceReady({html: view.html, csp: view.csp});
  bridge.oninitialized = async () => {
    note("view " + view.uri + " ready");
    await bridge.sendToolInput({arguments: args});
    const result = await called;
    if (result) await bridge.sendToolResult(JSON.parse(JSON.stringify(result, (k, v) => v === null ? undefined : v)));  // absent, not null
    else await bridge.sendToolCancelled({reason: "the call failed"});
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.src = view.sandbox;
}
// -- the server's questions -----------------------------------------------------------------------
const shown = new Map();
let since = 0;
function describe(e) {
  if (e.kind === "progress") return "progress " + e.progress + (e.total ? "/" + e.total : "") + (e.message ? " " + e.message : "");
  if (e.kind === "log") return "[" + e.level + "] " + (e.logger ? e.logger + ": " : "") + (typeof e.data === "string" ? e.data : JSON.stringify(e.data));
  if (e.kind === "reload") return e.ok ? "reloaded " + e.name : "reload failed: " + e.error;
  if (e.kind === "task") return "task " + e.taskId + " " + e.status + (e.message ? ": " + e.message : "");
  return JSON.stringify(e);
}
async function poll() {
  try {
    const {questions, events, tasks} = await api("pending", {since});
    showTasks(tasks);
    for (const e of events) { since = Math.max(since, e.seq); note(describe(e));
      if (e.kind === "reload") { if (e.ok) { banner(""); await render(); } else banner("The server file did not load: " + e.error + " (still serving the last version)"); } }
    const asks = document.getElementById("asks");
    const ids = new Set(questions.map(q => q.id));
    for (const [id, el] of shown) if (!ids.has(id)) { el.remove(); shown.delete(id); }
    for (const q of questions) if (!shown.has(q.id)) { const el = askCard(q); shown.set(q.id, el); asks.append(el); note("asked: " + q.message); }
    const empty = asks.querySelector("p.desc"); if (empty) empty.style.display = questions.length ? "none" : "";
  } catch (e) { banner(e.message); }
  setTimeout(poll, 250);
}
function showTasks(tasks) {
  const box = document.getElementById("tasks");
  if (!tasks.length) return;
  box.replaceChildren(...tasks.map(t => {
    const row = $("section", {class: "card", "data-task": t.taskId}, $("code", {text: t.taskId}),
      $("p", {"data-testid": "task-status", text: t.status + (t.message ? ": " + t.message : "")}));
    if (!["completed", "failed", "cancelled"].includes(t.status)) {
      const stop = $("button", {"data-testid": "task-cancel", text: "Cancel task"});
      stop.onclick = () => api("cancel_task", {taskId: t.taskId}).then(() => note("cancel asked for task " + t.taskId), e => banner(e.message));
      row.append(stop);
    }
    return row;
  }));
}
function askCard(q) {
  const answer = async (response) => { el.remove(); shown.delete(q.id); note("answered: " + (response.action || q.kind)); await api("answer", {id: q.id, response}); };
  const title = q.kind === "sample" ? "Sampling: reply as the model" : q.kind === "roots" ? "Roots" : q.mode === "url" ? "Consent" : "Form";
  const el = $("section", {class: "card", "data-ask": q.id, "data-kind": q.kind}, $("h3", {text: title}));
  if (q.kind === "sample") {
    if (q.systemPrompt) el.append($("p", {class: "desc", text: "System: " + q.systemPrompt}));
    for (const m of q.messages) el.append($("pre", {"data-testid": "ask-message", text: m.role + ": " + ((m.content && m.content.text) || JSON.stringify(m.content))}));
    const reply = $("textarea", {rows: 3, "data-testid": "ask-reply", placeholder: "The reply, at most " + q.maxTokens + " tokens"});
    const model = $("input", {type: "text", "data-testid": "ask-model", value: "typed-by-hand"});
    const send = $("button", {"data-testid": "ask-accept", text: "Send reply"});
    send.onclick = () => answer({role: "assistant", content: {type: "text", text: reply.value}, model: model.value || "typed-by-hand", stopReason: "endTurn"});
    const refuse = $("button", {"data-testid": "ask-decline", text: "Refuse"}); refuse.onclick = () => answer({refuse: true});
    el.append($("div", {class: "field"}, $("label", {text: "Reply"}), reply), $("div", {class: "field"}, $("label", {text: "Model"}), model), send, refuse);
    return el;
  }
  if (q.kind === "roots") {
    el.append($("p", {"data-testid": "ask-message", class: "desc", text: "The folders (file:// URIs) the server may work in, one per line."}));
    const list = $("textarea", {rows: 3, "data-testid": "ask-roots"}); list.value = (q.roots || []).join("\n");
    const send = $("button", {"data-testid": "ask-accept", text: "Send roots"});
    send.onclick = () => answer({roots: list.value.split("\n").map(x => x.trim()).filter(Boolean).map(uri => ({uri}))});
    el.append(list, send);
    return el;
  }
  el.append($("p", {"data-testid": "ask-message", text: q.message}));
  if (q.mode === "url") {
    const link = new URL(q.url);
    el.append($("p", {}, "Opens ", $("b", {text: link.host}), ": ", $("code", {"data-testid": "ask-url", text: q.url})));
    const open = $("button", {"data-testid": "ask-accept", text: "Open and continue"});
    open.onclick = () => { window.open(q.url, "_blank", "noopener"); answer({action: "accept"}); };
    el.append(open);
  } else {
    const form = formFor(q.schema); el.append(form);
    const ok = $("button", {"data-testid": "ask-accept", text: "Accept"});
    ok.onclick = () => { let content; try { content = form.read(); } catch (e) { return; } answer({action: "accept", content}); };
    el.append(ok);
  }
  const decline = $("button", {"data-testid": "ask-decline", text: "Decline"}); decline.onclick = () => answer({action: "decline"});
  const cancel = $("button", {"data-testid": "ask-cancel", text: "Cancel"}); cancel.onclick = () => answer({action: "cancel"});
  el.append(decline, cancel);
  return el;
}
function banner(text) { const b = document.getElementById("banner"); b.textContent = text; b.style.display = text ? "block" : "none"; }
async function start() {
  if (!secret) { banner("Open the exact URL rondo dev printed: it carries this run's secret."); return; }
  await render();
  document.body.dataset.ready = "yes";
  poll();
}
async function render() {
  const offer = await api("offer");
  const info = offer.server || {};
  document.getElementById("title").textContent = info.name || "server";
  document.getElementById("subtitle").textContent = (info.version || "") + (offer.era ? " (" + offer.era + " era)" : "");
  document.body.dataset.era = offer.era || "";
  const root = document.getElementById("offer"); root.replaceChildren();
  const section = (title, items) => { root.append($("h2", {text: title + " (" + items.length + ")"})); items.forEach(i => root.append(i)); };
  if (offer.apps) await loadBridge();
  const forModel = offer.tools.filter(t => visibleTo(t, "model"));
  section("Tools", forModel.map(t => card("tool", t.name, t.description, t.inputSchema, "call", v => ({name: t.name, arguments: v}), viewBox(t, offer.apps))));
  const viewOnly = offer.tools.filter(t => !visibleTo(t, "model")).map(t => t.name);
  if (viewOnly.length) root.append($("p", {class: "desc", "data-testid": "view-only-tools", text: "Only views call: " + viewOnly.join(", ")}));
  section("Resources", offer.resources.map(r => card("resource", r.uri, r.description, {}, "read", () => ({uri: r.uri}))));
  section("Templates", offer.templates.map(t => { const vars = [...t.uriTemplate.matchAll(/\{[+#]?([^}]+)\}/g)].map(m => m[1]);
    const schema = {type: "object", properties: Object.fromEntries(vars.map(v => [v, {type: "string"}])), required: vars};
    return card("template", t.uriTemplate, t.description, schema, "read", v => ({uri: t.uriTemplate.replace(/\{[+#]?([^}]+)\}/g, (_, k) => encodeURIComponent(v[k] || ""))})); }));
  section("Prompts", offer.prompts.map(p => { const args = p.arguments || [];
    const schema = {type: "object", properties: Object.fromEntries(args.map(a => [a.name, {type: "string", description: a.description}])), required: args.filter(a => a.required).map(a => a.name)};
    return card("prompt", p.name, p.description, schema, "prompt", v => ({name: p.name, arguments: v})); }));
}
start().catch(e => banner(e.message));
</script></body></html>
"""
