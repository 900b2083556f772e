// file: docs/snippets/apps_web/vite.config.js
import { defineConfig } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

// One index.html with every script and style inlined: a sandboxed view fetches nothing else.
export default defineConfig({ plugins: [viteSingleFile()], build: { outDir: "dist" } });
