// An MCP Apps server written with the official packages (@modelcontextprotocol/server 2.4.0 and
// @modelcontextprotocol/ext-apps 2.0.4's registerAppTool / registerAppResource), over stdio, for
// interop/rondo_apps_check.py: rondo's client reads its views as a host would.
//
//   node interop/ts_apps_server.mjs
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { EXTENSION_ID, RESOURCE_MIME_TYPE, registerAppResource, registerAppTool } from '@modelcontextprotocol/ext-apps/server';

const VIEW = 'ui://weather/view.html';
const HTML = '<!doctype html><html><body><p id="t">weather</p></body></html>';

function build() {
  const server = new McpServer({ name: 'ts-apps-server', version: '1.0.0' },
    { capabilities: { tools: {}, resources: {}, extensions: { [EXTENSION_ID]: {} } } });
  registerAppTool(server, 'weather', {
    description: 'The weather, with a view',
    _meta: { ui: { resourceUri: VIEW } },
  }, async () => ({ content: [{ type: 'text', text: 'sunny' }] }));
  registerAppTool(server, 'refresh', {
    description: 'Refresh the view (the view calls it)',
    _meta: { ui: { resourceUri: VIEW, visibility: ['app'] } },
  }, async () => ({ content: [{ type: 'text', text: 'refreshed' }] }));
  registerAppResource(server, 'Weather view', VIEW, {}, async () => ({
    contents: [{
      uri: VIEW, mimeType: RESOURCE_MIME_TYPE, text: HTML,
      _meta: { ui: { csp: { connectDomains: ['https://api.weather.example'],
                             resourceDomains: ['https://*.cdn.example'] },
                     permissions: { geolocation: {} }, prefersBorder: false } },
    }],
  }));
  return server;
}

serveStdio(build);
