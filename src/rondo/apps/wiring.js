// rondo's view wiring: the app side of MCP Apps (io.modelcontextprotocol/ui, 2026-01-26) over
// postMessage, written from the extension's text. It gives the page's script one object, `view`:
//   view.onInput(fn)        fn(arguments) once the host sends the tool's input
//   view.onPartialInput(fn) fn(arguments so far) while the model is still writing them
//   view.onResult(fn)       fn(result) with the tool's CallToolResult
//   view.onCancelled(fn)    fn(reason) if the tool's call was cancelled
//   view.onHostContext(fn)  fn(context) after the handshake and on every change
//   view.onTeardown(fn)     fn() before the host removes the view (it waits for a promise)
//   view.call(name, args)   a tools/call through the host; resolves with its CallToolResult
//   view.openLink(url), view.message(text), view.log(level, data)
//   view.hostContext        what the host said about itself (theme, locale, ...)
//   view.text(result), view.data(result), view.table(element, rows), view.values(form)
// and reports the document's size to the host as it changes. A handler set after the input or
// result arrived is called with it at once.
(function (appInfo, userScript) {
  "use strict";
  var host = window.parent, nextId = 1, pending = new Map();
  var seen = {input: undefined, partial: undefined, result: undefined, cancelled: undefined,
              context: undefined};
  var handlers = {input: [], partial: [], result: [], cancelled: [], context: [], teardown: []};
  function post(message) { host.postMessage(message, "*"); }
  function request(method, params) {
    var id = nextId++;
    post({jsonrpc: "2.0", id: id, method: method, params: params});
    return new Promise(function (resolve, reject) { pending.set(id, {resolve: resolve, reject: reject}); });
  }
  function notify(method, params) { post({jsonrpc: "2.0", method: method, params: params}); }
  function deliver(kind, value) {
    seen[kind] = value;
    handlers[kind].forEach(function (fn) { fn(value); });
  }
  function on(kind) {
    return function (fn) { handlers[kind].push(fn); if (seen[kind] !== undefined) fn(seen[kind]); };
  }
  var view = {
    hostContext: {},
    onInput: on("input"),
    onPartialInput: on("partial"),
    onResult: on("result"),
    onCancelled: on("cancelled"),
    onHostContext: on("context"),
    onTeardown: function (fn) { handlers.teardown.push(fn); },
    call: function (name, args) {
      return ready.then(function () { return request("tools/call", {name: name, arguments: args || {}}); });
    },
    openLink: function (url) {
      return ready.then(function () { return request("ui/open-link", {url: String(url)}); });
    },
    message: function (text) {
      return ready.then(function () {
        return request("ui/message", {role: "user", content: [{type: "text", text: String(text)}]});
      });
    },
    log: function (level, data) { notify("notifications/message", {level: level, data: data}); },
    text: function (result) {
      return ((result && result.content) || []).filter(function (c) { return c.type === "text"; })
        .map(function (c) { return c.text; }).join("\n");
    },
    data: function (result) {
      if (result && result.structuredContent !== undefined) return result.structuredContent;
      try { return JSON.parse(view.text(result)); } catch (e) { return undefined; }
    },
    table: function (element, rows) {
      var table = document.createElement("table"), head = document.createElement("tr");
      var columns = [];
      (rows || []).forEach(function (row) {
        Object.keys(row).forEach(function (k) { if (columns.indexOf(k) < 0) columns.push(k); });
      });
      columns.forEach(function (k) { var th = document.createElement("th"); th.textContent = k; head.appendChild(th); });
      table.appendChild(head);
      (rows || []).forEach(function (row) {
        var tr = document.createElement("tr");
        columns.forEach(function (k) {
          var td = document.createElement("td"), v = row[k];
          td.textContent = v === undefined ? "" : (typeof v === "object" ? JSON.stringify(v) : String(v));
          tr.appendChild(td);
        });
        table.appendChild(tr);
      });
      element.replaceChildren(table);
      return table;
    },
    values: function (form) {
      var out = {};
      Array.prototype.forEach.call(form.elements, function (el) {
        if (!el.name) return;
        if (el.type === "checkbox") out[el.name] = el.checked;
        else if (el.type === "number" || el.type === "range") out[el.name] = el.value === "" ? null : Number(el.value);
        else if (el.type !== "submit" && el.type !== "button") out[el.name] = el.value;
      });
      return out;
    }
  };
  window.addEventListener("message", function (event) {
    if (event.source !== host) return;
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined) {
      var waiting = pending.get(m.id);
      if (!waiting) return;
      pending.delete(m.id);
      if (m.error) {
        var error = new Error(m.error.message);
        error.code = m.error.code; error.data = m.error.data;
        waiting.reject(error);
      } else { waiting.resolve(m.result); }
      return;
    }
    var params = m.params || {};
    if (m.method === "ui/notifications/tool-input") deliver("input", params.arguments || {});
    else if (m.method === "ui/notifications/tool-input-partial") deliver("partial", params.arguments || {});
    else if (m.method === "ui/notifications/tool-result") deliver("result", params);
    else if (m.method === "ui/notifications/tool-cancelled") deliver("cancelled", params.reason || "");
    else if (m.method === "ui/notifications/host-context-changed") {
      Object.assign(view.hostContext, params);
      deliver("context", view.hostContext);
    } else if (m.method === "ui/resource-teardown" && m.id !== undefined) {
      Promise.all(handlers.teardown.map(function (fn) { return fn(); })).then(
        function () { post({jsonrpc: "2.0", id: m.id, result: {}}); },
        function (e) { post({jsonrpc: "2.0", id: m.id, error: {code: -32000, message: String(e && e.message || e)}}); });
    } else if (m.id !== undefined) {
      if (m.method === "ping") post({jsonrpc: "2.0", id: m.id, result: {}});
      else post({jsonrpc: "2.0", id: m.id, error: {code: -32601, message: "Method not found"}});
    }
  });
  var last = "";
  function report() {
    var el = document.documentElement;
    var size = {width: Math.ceil(el.scrollWidth), height: Math.ceil(el.scrollHeight)};
    var key = size.width + "x" + size.height;
    if (key !== last) { last = key; notify("ui/notifications/size-changed", size); }
  }
  userScript(view);
  var ready = request("ui/initialize", {
    protocolVersion: "2026-01-26", appInfo: appInfo, appCapabilities: {}
  }).then(function (result) {
    view.hostContext = (result && result.hostContext) || {};
    notify("ui/notifications/initialized", {});
    deliver("context", view.hostContext);
    report();
    if (window.ResizeObserver) new ResizeObserver(report).observe(document.documentElement);
  });
})
