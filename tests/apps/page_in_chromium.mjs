// A view made by rondo.apps.page() (rondo's own wiring), in headless Chromium, behind a small host
// written here: the view runs in a sandboxed frame (allow-scripts only: an opaque origin) under
// the policy the view's metadata gives (ViewMeta.policy(), passed in), and the host answers it
// with the official TypeScript client (2.4.0) connected to a real rondo server over HTTP: the
// tool's result goes to the view, the view's button calls an app-only tool that asks the user,
// the host's elicitation handler answers (the user's form), and the view shows the final result.
// With TOOL stock_official the view is the same page on the official App (ext-apps 2.0.4's
// app-with-deps.js, pinned in interop/), which the test serves at the origin the view declares.
// Prints one JSON line of what the page showed; a screenshot goes to argv[5].
//   node tests/apps/page_in_chromium.mjs MCP_URL CHROMIUM POLICY TOOL SCREENSHOT
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const load = (rel) => import(pathToFileURL(path.join(ROOT, rel)).href);
const { chromium } = await load("tests/peers/browser/node_modules/playwright-core/index.mjs");
const { Client, StreamableHTTPClientTransport } = await load(
  "interop/node_modules/@modelcontextprotocol/client/dist/index.mjs");

const [url, executablePath, policy, tool, screenshot] = process.argv.slice(2);
const seen = { asked: [], sizes: [], hostSaw: [] };
const client = new Client({ name: "page-host", version: "1.0.0" }, {
  capabilities: { elicitation: { form: {} },
                  extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
  versionNegotiation: { mode: { pin: "2026-07-28" } },
});
client.setRequestHandler("elicitation/create", async (request) => {
  seen.asked.push(request.params.message);  // the form a host shows; the user types 7
  return { action: "accept", content: { count: 7 } };
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const { tools } = await client.listTools();
const uri = tools.find((t) => t.name === tool)._meta.ui.resourceUri;
const { contents } = await client.readResource({ uri });
const args = { shelf: "B" };
const result = await client.callTool({ name: tool, arguments: args });

const browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  page.on("console", (m) => { if (m.type() === "error") seen.hostSaw.push("console: " + m.text()); });
  page.on("pageerror", (e) => seen.hostSaw.push("console: " + e.message));
  await page.exposeFunction("hostCallTool", async (name, toolArgs) => {
    const app = tools.find((t) => t.name === name)?._meta?.ui?.visibility ?? ["model", "app"];
    if (!app.includes("app")) throw new Error(`${name} is not callable from a view`);
    return client.callTool({ name, arguments: toolArgs });
  });
  await page.exposeFunction("hostNote", (note) => { seen.hostSaw.push(note); });
  await page.exposeFunction("hostSize", (size) => { seen.sizes.push(size); });
  const view = contents[0].text.replace("<head>",
    `<head><meta http-equiv="Content-Security-Policy" content="${policy}">`);
  const js = (value) => JSON.stringify(value).replace(/</g, "\\u003c");  // safe inside <script>
  await page.setContent(`<!doctype html><html><body>
<iframe id="view" sandbox="allow-scripts" style="width:480px;height:300px;border:1px solid #ccc"></iframe>
<script>
const frame = document.getElementById("view");
const input = ${js(args)}, result = ${js(result)};
const post = (m) => frame.contentWindow.postMessage(m, "*");
window.addEventListener("message", async (event) => {
  if (event.source !== frame.contentWindow) return;
  const m = event.data;
  hostNote(m.method ?? "response");
  if (m.method === "ui/initialize") {
    post({jsonrpc: "2.0", id: m.id, result: {protocolVersion: "2026-01-26",
      hostInfo: {name: "page-host", version: "1.0.0"}, hostCapabilities: {serverTools: {}},
      hostContext: {theme: "light"}}});
  } else if (m.method === "ui/notifications/initialized") {
    post({jsonrpc: "2.0", method: "ui/notifications/tool-input", params: {arguments: input}});
    post({jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result});
  } else if (m.method === "ui/notifications/size-changed") {
    hostSize(m.params);
  } else if (m.method === "tools/call") {
    try { post({jsonrpc: "2.0", id: m.id, result: await hostCallTool(m.params.name, m.params.arguments)}); }
    catch (e) { post({jsonrpc: "2.0", id: m.id, error: {code: -32603, message: String(e.message)}}); }
  }
});
frame.srcdoc = ${js(view)};
</script></body></html>`);
  const inner = page.frameLocator("#view");
  try {
    await inner.locator("#rows table tr").nth(2).waitFor();
  } catch (error) {
    console.error(JSON.stringify(seen));
    throw error;
  }
  seen.input = await inner.locator("#input").textContent();
  seen.rows = await inner.locator("#rows table tr").evaluateAll(
    (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
  await inner.locator("#restock").click();
  await inner.locator("#out", { hasText: "restocked" }).waitFor();
  seen.out = await inner.locator("#out").textContent();
  await page.screenshot({ path: screenshot });
} finally {
  await browser.close();
  await client.close();
}
console.log(JSON.stringify(seen));
