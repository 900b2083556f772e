// A protected MCP server written with the official TypeScript server (@modelcontextprotocol/server
// 2.4.0) and its resource-server helpers: oauthMetadataResponse (RFC 9728 metadata),
// requireBearerAuth (401 challenges, audience check), requireScopes (403 step-up). Tokens are
// JWTs from the authorization server given on the command line, checked against its JWKS.
//
//   node interop/ts_protected_server.mjs ISSUER    prints "http://127.0.0.1:PORT/mcp", exits on stdin EOF
//
// Tools: whoami (needs mcp:use), confirm_action {action} (needs mcp:use and files:write; one
// MRTR round: a form elicitation, with a requestState the retry must echo).
import { createServer } from 'node:http';
import {
  McpServer, createMcpHandler, inputRequired, acceptedContent, oauthMetadataResponse,
  requireBearerAuth, requireScopes, getOAuthProtectedResourceMetadataUrl, OAuthError, OAuthErrorCode,
} from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as z from 'zod';

const issuer = process.argv[2];
if (!issuer) throw new Error('usage: node interop/ts_protected_server.mjs ISSUER');
const asMetadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
const jwks = createRemoteJWKSet(new URL(asMetadata.jwks_uri));

const verifier = {
  async verifyAccessToken(token) {
    try {
      const { payload } = await jwtVerify(token, jwks, { issuer });
      return {
        token,
        clientId: String(payload.client_id ?? ''),
        scopes: String(payload.scope ?? '').split(' ').filter(Boolean),
        expiresAt: payload.exp,
        resource: payload.aud ? new URL(String(payload.aud)) : undefined,
        extra: { sub: payload.sub },
      };
    } catch {
      throw new OAuthError(OAuthErrorCode.InvalidToken, 'invalid token');
    }
  },
};

function build() {
  const server = new McpServer({ name: 'ts-protected-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('whoami', { inputSchema: z.object({}) }, async (_args, ctx) => ({
    content: [{ type: 'text', text: `sub=${ctx.http?.authInfo?.extra?.sub}` }],
  }));
  server.registerTool('confirm_action', {
    inputSchema: z.object({ action: z.string() }),
    scopeChallenge: requireScopes('mcp:use', 'files:write'),
  }, async ({ action }, ctx) => {
    const answer = ctx.mcpReq.inputResponses?.confirm;
    if (answer === undefined) {
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: `Really ${action}?`, requestedSchema: {
          type: 'object', properties: { confirmed: { type: 'boolean' } }, required: ['confirmed'] } }) },
        requestState: `confirm:${action}`,
      });
    }
    if (ctx.mcpReq.requestState() !== `confirm:${action}`) throw new Error('requestState not echoed');
    const content = acceptedContent(ctx.mcpReq.inputResponses, 'confirm');
    return { content: [{ type: 'text', text: content?.confirmed ? `confirmed ${action}` : `declined ${action}` }] };
  });
  return server;
}

const mcp = createMcpHandler(build);
let resourceUrl;
let gate;
const handler = {
  async fetch(request, options) {
    const metadata = oauthMetadataResponse(request, {
      oauthMetadata: asMetadata, resourceServerUrl: resourceUrl, scopesSupported: ['mcp:use'],
      dangerouslyAllowInsecureIssuerUrl: true,
    });
    if (metadata) return metadata;
    const auth = await gate(request);
    if (auth instanceof Response) return auth;
    return mcp.fetch(request, { ...options, authInfo: auth });
  },
};

const http = createServer(toNodeHandler(handler));
http.listen(0, '127.0.0.1', () => {
  resourceUrl = new URL(`http://127.0.0.1:${http.address().port}/mcp`);
  gate = requireBearerAuth({
    verifier, requiredScopes: ['mcp:use'], expectedResource: resourceUrl,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resourceUrl),
  });
  process.stdout.write(`${resourceUrl.href}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
