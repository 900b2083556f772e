// file: tests/peers/apps/build.mjs
// Bundles the pinned @modelcontextprotocol/ext-apps into two classic browser scripts (IIFE):
//   dist/ext-apps-host.js  window.McpAppsHost = the `./app-bridge` entry (AppBridge,
//                          PostMessageTransport, ...), what `rondo dev --apps-bridge` serves
//   dist/ext-apps-app.js   window.McpApps = the `.` entry (App, ...), what a view inlines
// usage: node build.mjs   (after npm ci; scripts/setup.sh runs both)
import { build } from "esbuild";
import { readFileSync } from "node:fs";

const version = JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/ext-apps/package.json", import.meta.url))).version;
const common = { bundle: true, format: "iife", minify: true, platform: "browser", target: "es2022",
                 legalComments: "none", logLevel: "error" };
await build({ ...common, entryPoints: ["@modelcontextprotocol/ext-apps/app-bridge"], globalName: "McpAppsHost",
              outfile: "dist/ext-apps-host.js", banner: { js: `/* @modelcontextprotocol/ext-apps ${version} app-bridge */` } });
await build({ ...common, entryPoints: ["@modelcontextprotocol/ext-apps"], globalName: "McpApps",
              outfile: "dist/ext-apps-app.js", banner: { js: `/* @modelcontextprotocol/ext-apps ${version} app */` } });
