// file: docs/snippets/apps_web/src/main.js
import { App } from "@modelcontextprotocol/ext-apps";

// The official App, bundled into the page by Vite: no script is loaded at run time.
const app = new App({ name: "sales-chart", version: "1.0.0" });
const chart = document.getElementById("chart");
app.ontoolresult = (result) => {
  chart.textContent = JSON.stringify(result.structuredContent);
};
document.getElementById("refresh").onclick = async () => {
  const result = await app.callServerTool({ name: "refresh_sales", arguments: {} });
  chart.textContent = JSON.stringify(result.structuredContent);
};
await app.connect();
