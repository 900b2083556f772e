// The official TypeScript client (@modelcontextprotocol/client 2.4.0) with its OAuth provider,
// signing in through rondo's authorization facade (tests/auth/test_facade_live.py starts the
// facade and a real OpenID provider, and plays the user's browser):
//   401 -> protected resource metadata -> the facade's AS metadata -> dynamic registration ->
//   PKCE authorization (printed as "AUTHORIZE <url>"; the test answers "CALLBACK <url>" on stdin
//   after consent and the provider's sign-in) -> token -> a tool reading the provider's identity
//   -> an MRTR round -> refresh (the access token spoiled: 401, the SDK refreshes, rotation) ->
//   revocation (RFC 7009): the next refresh is refused (invalid_grant).
//
//   node interop/ts_facade_check.mjs http://127.0.0.1:PORT/mcp
import assert from 'node:assert/strict';
import readline from 'node:readline';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';

const MODERN = '2026-07-28';
const mcpUrl = new URL(process.argv[2]);
const REDIRECT = 'http://127.0.0.1:9/callback'; // never visited: the test reads the Location
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

class HeadlessProvider {
  constructor() { this.authorizations = []; }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: 'ts-facade-interop', redirect_uris: [REDIRECT],
             grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
             token_endpoint_auth_method: 'none' };
  }
  clientInformation() { return this.client; }
  saveClientInformation(info) { this.client = info; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  redirectToAuthorization(url) { this.authorizations.push(new URL(url)); }
  saveDiscoveryState(state) { this.discovery = state; }
  discoveryState() { return this.discovery; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

async function browser(provider, transport) {
  console.log(`AUTHORIZE ${provider.authorizations.at(-1).href}`);
  const { value } = await lines.next();
  assert.ok(value?.startsWith('CALLBACK '), `the test answers the callback: ${value}`);
  const back = new URL(value.slice('CALLBACK '.length));
  await transport.finishAuth(back.searchParams);
}

const provider = new HeadlessProvider();
const done = [];
const client = new Client({ name: 'rondo-ts-facade-interop', version: '1.0.0' }, {
  versionNegotiation: { mode: { pin: MODERN } },
  capabilities: { elicitation: { form: {} } },
  inputRequired: { autoFulfill: true, maxRounds: 5 },
});
client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { ok: true } }));
const make = () => new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });

let transport = make();
try {
  await client.connect(transport, { signal: AbortSignal.timeout(20000) });
  assert.fail('the facade-protected server must ask for a sign-in');
} catch (error) {
  if (!(error instanceof UnauthorizedError) && !String(error).includes('Unauthorized')) throw error;
}
await browser(provider, transport);
transport = make();
await client.connect(transport, { signal: AbortSignal.timeout(20000) });
const first = provider.authorizations[0];
assert.equal(first.origin + first.pathname, new URL('/authorize', mcpUrl).href, 'sent to the facade');
assert.equal(first.searchParams.get('resource'), mcpUrl.href);
assert.equal(first.searchParams.get('code_challenge_method'), 'S256');
assert.ok(provider.client?.client_id, 'registered dynamically at the facade');
done.push('sign-in through the facade: 401 -> PRM -> AS metadata -> DCR -> consent -> provider -> token');

let result = await client.callTool({ name: 'whoami', arguments: {} });
assert.equal(result.content[0].text, 'alice Alice Liddell alice@example.com');
done.push('a tool reads the provider identity');
result = await client.callTool({ name: 'confirm', arguments: { thing: 'the deploy' } });
assert.equal(result.content[0].text, 'alice did the deploy');
done.push('MRTR round');

// Refresh: spoil the access token; the 401 makes the SDK use its refresh token.
const before = provider.saved;
provider.saved = { ...before, access_token: 'spoiled' };
await client.close();
transport = make();
await client.connect(transport, { signal: AbortSignal.timeout(20000) });
result = await client.callTool({ name: 'whoami', arguments: {} });
assert.equal(result.content[0].text, 'alice Alice Liddell alice@example.com');
assert.notEqual(provider.saved.refresh_token, before.refresh_token, 'the refresh token rotated');
assert.equal(provider.authorizations.length, 1, 'refreshed without a new sign-in');
done.push('refresh on 401 with rotation');

// Revocation: the refresh token is revoked at the facade; the next refresh is refused.
const revoked = await fetch(new URL('/revoke', mcpUrl), { method: 'POST', body: new URLSearchParams({
  token: provider.saved.refresh_token, client_id: provider.client.client_id }) });
assert.equal(revoked.status, 200);
provider.saved = { ...provider.saved, access_token: 'spoiled' };
await client.close();
let refused = false;
try {
  await client.connect(make(), { signal: AbortSignal.timeout(20000) });
  await client.callTool({ name: 'whoami', arguments: {} });
} catch (error) {
  refused = String(error);
}
// The SDK surfaces the facade's invalid_grant as an OAuthError with its description.
assert.match(String(refused), /OAuthError: The refresh token has been revoked/, 'refused after revocation');
done.push('refused after revocation (the refresh answers invalid_grant)');
await client.close();
for (const line of done) console.log(`ok - ${line}`);
process.exit(0);
