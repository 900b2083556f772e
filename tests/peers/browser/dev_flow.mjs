// Drives `rondo dev examples/preferences.py` in headless Chromium by clicking and typing only:
// a form question, two rounds, a URL consent then a state-only round, a template read and a
// prompt. Prints one JSON line of what the page showed; screenshots go to argv[3].
// usage: node dev_flow.mjs URL SCREENSHOT_DIR CHROMIUM [preferences|deploy|asking|everything|reload]
import { chromium } from "playwright-core";

const [url, shots, executablePath, scenario = "preferences"] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const seen = {};
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15000);
  await page.goto(url);
  await page.waitForSelector("body[data-ready=yes]");
  seen.addressBar = page.url();
  const card = (name) => page.locator(`[data-card="${name}"]`);
  const ask = () => page.locator("#asks section").first();
  const resultOf = async (name) => {
    const text = card(name).locator(".result pre").first();
    await page.waitForFunction((n) => {
      const pre = document.querySelector(`[data-card="${n}"] .result pre`);
      return pre && pre.textContent !== "waiting...";
    }, name);
    return text.textContent();
  };

  if (scenario === "deploy") {
    // A task: a question before it starts, its status on the timeline, a question inside it.
    await card("tool:deploy").locator("[data-field=service]").fill("api");
    await page.click("[data-testid='tool-deploy']");
    await ask().waitFor();
    seen.before = await ask().locator("[data-testid=ask-message]").textContent();
    await ask().locator("select[data-field=env]").selectOption({ label: "staging" });
    await ask().locator("[data-testid=ask-accept]").click();
    await page.waitForFunction(() => {
      const m = document.querySelector("#asks section [data-testid=ask-message]");
      return m && m.textContent.includes("Switch");
    });
    seen.during = await ask().locator("[data-testid=ask-message]").textContent();
    seen.defaultChecked = await ask().locator("input[data-field=switch]").isChecked();
    await ask().locator("input[data-field=switch]").uncheck();
    await page.screenshot({ path: `${shots}/dev-task-question.png`, fullPage: true });
    await ask().locator("[data-testid=ask-accept]").click();
    seen.deploy = await resultOf("tool:deploy");
    await page.waitForFunction(() => [...document.querySelectorAll("#timeline li")].some(li => li.textContent.includes(" completed")));
    seen.timeline = await page.locator("#timeline li").allTextContents();
    seen.finishedTask = await page.locator("#tasks [data-testid=task-status]").first().textContent();
    // A second deploy, cancelled from the task list while it waits in the middle.
    await card("tool:deploy").locator("[data-field=service]").fill("web");
    await page.click("[data-testid='tool-deploy']");
    await ask().waitFor();
    await ask().locator("select[data-field=env]").selectOption({ label: "production" });
    await ask().locator("[data-testid=ask-accept]").click();
    const cancel = page.locator("#tasks [data-testid=task-cancel]");
    await cancel.waitFor();
    seen.runningTasks = await cancel.count();
    await cancel.click();
    await page.waitForFunction(() => {
      const pre = document.querySelector('[data-card="tool:deploy"] .result pre');
      return pre && pre.textContent.includes("cancelled");
    });
    seen.cancelled = await card("tool:deploy").locator(".result pre").first().textContent();
    await page.screenshot({ path: `${shots}/dev-task-done.png`, fullPage: true });
    console.log(JSON.stringify(seen));
    await browser.close();
    process.exit(0);
  }
  if (scenario === "reload") {
    // The test rewrites the server file once the page says it is ready; the page shows the
    // new tool without being reloaded by hand, and the old one still answers.
    console.log("READY");
    await page.waitForSelector("[data-testid='tool-added']", { timeout: 20000 });
    seen.reloadNote = await page.locator("#timeline li", { hasText: "reloaded" }).first().textContent();
    await page.click("[data-testid='tool-added']");
    seen.added = await resultOf("tool:added");
    console.log(JSON.stringify(seen));
    await browser.close();
    process.exit(0);
  }
  if (scenario === "everything") {
    // The official reference server (2025-11-25, over stdio): its elicitation form with every
    // field type, and its sampling request answered as the model.
    seen.serverName = await page.locator("#title").textContent();
    // It asks for the roots as soon as it is initialized: an editable list.
    const roots = page.locator("#asks section[data-kind=roots]");
    await roots.waitFor();
    await roots.locator("[data-testid=ask-roots]").fill("file:///work/project");
    await roots.locator("[data-testid=ask-accept]").click();
    await page.click("[data-testid='tool-get-roots-list']");
    seen.rootsListed = await resultOf("tool:get-roots-list");
    await page.click("[data-testid='tool-trigger-elicitation-request']");
    await ask().waitFor();
    seen.formMessage = await ask().locator("[data-testid=ask-message]").textContent();
    await ask().locator("input[data-field=name]").fill("Ada Lovelace");
    await ask().locator("input[data-field=check]").check();
    await ask().locator("input[data-field=email]").fill("not an email");
    await ask().locator("[data-testid=ask-accept]").click();
    seen.emailRefused = await ask().locator("[data-error=email]").textContent();
    await ask().locator("input[data-field=email]").fill("ada@example.com");
    await ask().locator("[data-field=untitledMultipleSelectEnum] [data-choice=Piano]").check();
    await ask().locator("select[data-field=titledSingleSelectEnum]").selectOption({ label: "Wonder Woman" });
    await page.screenshot({ path: `${shots}/dev-everything-form.png`, fullPage: true });
    await ask().locator("[data-testid=ask-accept]").click();
    await resultOf("tool:trigger-elicitation-request");
    seen.elicited = await card("tool:trigger-elicitation-request").locator(".result").textContent();
    // Results of other kinds: an embedded resource and an image.
    await page.click("[data-testid='tool-get-resource-reference']");
    await resultOf("tool:get-resource-reference");
    seen.embedded = await card("tool:get-resource-reference").locator("[data-testid=resource]").first().textContent();
    await page.click("[data-testid='tool-get-tiny-image']");
    await resultOf("tool:get-tiny-image");
    seen.images = await card("tool:get-tiny-image").locator(".result img").count();
    await card("tool:trigger-sampling-request").locator("[data-field=prompt]").fill("Say hello");
    await page.click("[data-testid='tool-trigger-sampling-request']");
    await ask().waitFor();
    seen.sampleShown = await ask().locator("[data-testid=ask-message]").first().textContent();
    await ask().locator("[data-testid=ask-reply]").fill("hello from a person");
    await ask().locator("[data-testid=ask-accept]").click();
    await resultOf("tool:trigger-sampling-request");
    seen.sampled = await card("tool:trigger-sampling-request").locator(".result").textContent();
    console.log(JSON.stringify(seen));
    await browser.close();
    process.exit(0);
  }
  if (scenario === "asking") {
    // Sampling answered as the model would (an editable reply), roots as an editable list.
    await card("tool:haiku").locator("[data-field=topic]").fill("rain");
    await page.click("[data-testid='tool-haiku']");
    await ask().waitFor();
    seen.sampleShown = await ask().locator("[data-testid=ask-message]").first().textContent();
    await ask().locator("[data-testid=ask-reply]").fill("soft rain on the roof");
    await page.screenshot({ path: `${shots}/dev-sampling.png`, fullPage: true });
    await ask().locator("[data-testid=ask-accept]").click();
    seen.haiku = await resultOf("tool:haiku");
    await page.click("[data-testid='tool-folders']");
    await ask().waitFor();
    await ask().locator("[data-testid=ask-roots]").fill("file:///work/a\nfile:///work/b");
    await ask().locator("[data-testid=ask-accept]").click();
    seen.folders = await resultOf("tool:folders");
    await page.click("[data-testid='tool-folders']");  // offered again as it was left
    await ask().waitFor();
    seen.rootsAgain = await ask().locator("[data-testid=ask-roots]").inputValue();
    await ask().locator("[data-testid=ask-accept]").click();
    // A nested object (a dataclass parameter): a fieldset of its own fields.
    await page.click("[data-testid='tool-book']");
    seen.nestedRequired = await card("tool:book").locator("[data-field=trip] [data-error=city]").textContent();
    await card("tool:book").locator("[data-field=trip] [data-field=city]").fill("Oslo");
    await card("tool:book").locator("[data-field=trip] [data-field=nights]").fill("3");
    await page.click("[data-testid='tool-book']");
    seen.booked = await resultOf("tool:book");
    await card("tool:steps").locator("[data-field=n]").fill("3");
    await page.click("[data-testid='tool-steps']");
    seen.steps = await resultOf("tool:steps");
    await page.waitForFunction(() => [...document.querySelectorAll("#timeline li")].some(li => li.textContent.includes("progress 3/3 step 3")));
    seen.timeline = await page.locator("#timeline li").allTextContents();
    console.log(JSON.stringify(seen));
    await browser.close();
    process.exit(0);
  }

  // 1. A form question: the tool's form, then the server's.
  await card("tool:favorite_color").locator("[data-field=user]").fill("ann");
  await page.click("[data-testid='tool-favorite_color']");
  await ask().waitFor();
  seen.firstQuestion = await ask().locator("[data-testid=ask-message]").textContent();
  await ask().locator("select[data-field=color]").selectOption({ label: "green" });
  await page.screenshot({ path: `${shots}/dev-form-question.png`, fullPage: true });
  await ask().locator("[data-testid=ask-accept]").click();
  seen.favorite = await resultOf("tool:favorite_color");

  // 2. Two rounds, one question after the other.
  await card("tool:profile").locator("[data-field=user]").fill("bo");
  await page.click("[data-testid='tool-profile']");
  await ask().waitFor();
  await ask().locator("select[data-field=color]").selectOption({ label: "blue" });
  await ask().locator("[data-testid=ask-accept]").click();
  await page.waitForFunction(() => {
    const m = document.querySelector("#asks section [data-testid=ask-message]");
    return m && m.textContent.includes("size");
  });
  seen.secondQuestion = await ask().locator("[data-testid=ask-message]").textContent();
  await ask().locator("select[data-field=size]").selectOption({ label: "large" });
  await ask().locator("[data-testid=ask-accept]").click();
  seen.profile = await resultOf("tool:profile");

  // 3. A URL consent step (the link and its host shown), then a state-only round.
  await card("tool:connect_calendar").locator("[data-field=user]").fill("cy");
  await page.click("[data-testid='tool-connect_calendar']");
  await ask().waitFor();
  seen.consentUrl = await ask().locator("[data-testid=ask-url]").textContent();
  await page.screenshot({ path: `${shots}/dev-url-consent.png`, fullPage: true });
  const popup = page.waitForEvent("popup").catch(() => null);
  await ask().locator("[data-testid=ask-accept]").click();
  const opened = await popup;
  if (opened) { seen.popup = opened.url(); await opened.close(); }
  seen.calendar = await resultOf("tool:connect_calendar");

  // 4. A resource template read, with its own question.
  await card("template:prefs://{user}/color").locator("[data-field=user]").fill("di");
  await page.click("[data-testid='template-prefs://{user}/color']");
  await ask().waitFor();
  await ask().locator("select[data-field=color]").selectOption({ label: "red" });
  await ask().locator("[data-testid=ask-accept]").click();
  seen.resource = await resultOf("template:prefs://{user}/color");

  // 5. A prompt, declining its question.
  await card("prompt:color_poem").locator("[data-field=user]").fill("ed");
  await page.click("[data-testid='prompt-color_poem']");
  await ask().waitFor();
  await ask().locator("[data-testid=ask-decline]").click();
  seen.prompt = await resultOf("prompt:color_poem");

  // 6. A value the form refuses is named under its field, and nothing is sent.
  await card("tool:favorite_color").locator("[data-field=user]").fill("");
  await page.click("[data-testid='tool-favorite_color']");
  seen.required = await card("tool:favorite_color").locator("[data-error=user]").textContent();

  seen.timeline = await page.locator("#timeline li").count();
  await page.screenshot({ path: `${shots}/dev-done.png`, fullPage: true });
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
