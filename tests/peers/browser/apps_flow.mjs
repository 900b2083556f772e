// Drives `rondo dev tests/helpers/apps_view_server.py --apps-bridge ...` in headless Chromium:
// the tool's view hosted through the official AppBridge, the view (official App) showing the
// tool's input and result, a button in the view calling a view-only tool, and a view-initiated
// call whose question the page shows and this script answers. Prints one JSON line of what the
// page showed; the screenshot goes to argv[3].
// usage: node apps_flow.mjs URL SCREENSHOT_DIR CHROMIUM [NAME]
import { chromium } from "playwright-core";

const [url, shots, executablePath, name = "apps"] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const seen = { console: [] };
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(20000);
  page.on("console", (m) => { if (m.type() === "error" || process.env.DEBUG) seen.console.push(m.type() + " " + m.text()); });
  await page.goto(url);
  await page.waitForSelector("body[data-ready=yes]");
  seen.era = await page.locator("body").getAttribute("data-era");
  seen.viewOnly = await page.locator("[data-testid=view-only-tools]").textContent();
  seen.cards = await page.locator("[data-card^='tool:']").count();
  const card = page.locator("[data-card='tool:show_order']");
  await card.locator("[data-field=item]").fill("tea");
  await card.locator("[data-field=quantity]").fill("2");
  await page.click("[data-testid='tool-show_order']");
  const frame = page.locator("[data-testid=view-frame]");
  await frame.waitFor();
  seen.proxyUrl = await frame.getAttribute("src");
  seen.proxySandbox = await frame.getAttribute("sandbox");
  const view = page.frameLocator("[data-testid=view-frame]").frameLocator("iframe");
  const textOf = async (id, not = "-") => {
    const el = view.locator("#" + id);
    await el.filter({ hasNotText: new RegExp("^(" + not + ")$") }).waitFor();
    return el.textContent();
  };
  seen.input = await textOf("input");
  seen.result = await textOf("result");
  seen.csp = await textOf("csp");
  // The inner frame: sandboxed without allow-same-origin, its document a srcdoc.
  const proxy = page.frames().find((f) => f.url().includes("/apps/sandbox/"));
  seen.viewSandbox = await proxy.locator("iframe").getAttribute("sandbox");
  seen.proxyOrigin = new URL(proxy.url()).origin;
  seen.pageOrigin = new URL(page.url()).origin;
  // From inside the view: the page's document and its API are out of reach.
  seen.isolation = await proxy.childFrames()[0].evaluate(async (pageOrigin) => {
    const out = { origin: String(window.origin) };
    try { out.top = window.top.document.title; } catch (e) { out.top = "blocked"; }
    try { await fetch(pageOrigin + "/api/offer", { method: "POST", body: "{}" }); out.api = "reached"; }
    catch (e) { out.api = "blocked"; }
    return out;
  }, seen.pageOrigin);
  // A button in the view calls a tool only views may call.
  await view.locator("#price").click();
  seen.price = await textOf("price-out", "-|waiting...");  // past the view's own "waiting..."
  // A view-initiated call that needs the user's answer: the page shows the question.
  await view.locator("#order").click();
  const ask = page.locator("#asks section").first();
  await ask.waitFor();
  seen.question = await ask.locator("[data-testid=ask-message]").textContent();
  await ask.locator("input[data-field=name]").fill("Ada");
  await page.screenshot({ path: `${shots}/${name}-question.png`, fullPage: true });
  await ask.locator("[data-testid=ask-accept]").click();
  seen.order = await textOf("order-out", "-|waiting...");
  // The tool called again: the old view is torn down, one new view gets the new input.
  await card.locator("[data-field=item]").fill("coffee");
  await page.click("[data-testid='tool-show_order']");
  await page.locator("#timeline li", { hasText: "view ui://orders/view.html ready" }).nth(1).waitFor();
  seen.again = await textOf("input", '-|\\{"item":"tea","quantity":2\\}');
  seen.frames = await page.locator("[data-testid=view-frame]").count();
  seen.timeline = await page.locator("#timeline li").allTextContents();
  seen.screenshot = `${shots}/${name}-view.png`;
  await page.screenshot({ path: seen.screenshot, fullPage: true });
} catch (e) {
  console.error(JSON.stringify(seen, null, 1));
  for (const f of browser.contexts()[0].pages()[0].frames()) console.error(f.url().slice(0, 80), await f.evaluate(() => document.body && document.body.innerText.slice(0, 400)).catch(x => String(x)));
  throw e;
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
