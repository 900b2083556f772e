// The official TypeScript client (@modelcontextprotocol/client 2.4.0) with its OAuth provider
// against a protected rondo server and a real authorization server (tests/authserver):
//   401 -> protected resource metadata -> AS metadata -> dynamic registration -> PKCE
//   authorization (consent auto-approved: we read the redirect ourselves) -> token with the
//   RFC 8707 resource -> an MRTR flow (greet asks for a name) -> a 403 insufficient_scope
//   step-up for `write`, re-authorized with the union of scopes -> the call goes through.
//
//   node interop/ts_auth_check.mjs http://127.0.0.1:PORT/mcp
// Exit 0 = all ok; prints one line per checked step.
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';

const MODERN = '2026-07-28';
const mcpUrl = new URL(process.argv[2]);
const REDIRECT = 'http://127.0.0.1:9/callback'; // never visited: we read the Location ourselves

class HeadlessProvider {
  constructor() {
    this.client = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.authorizations = [];
  }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return {
      client_name: 'rondo-auth-interop',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    };
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

// The user's side of the flow: open the authorization URL, the AS approves and redirects.
async function consent(provider, transport) {
  const url = provider.authorizations.at(-1);
  const response = await fetch(url, { redirect: 'manual' });
  assert.equal(response.status, 302, 'the AS redirects back with a code');
  const back = new URL(response.headers.get('location'));
  await transport.finishAuth(back.searchParams);
}

async function signedIn(provider, make, action) {
  let transport = make();
  try {
    return await action(transport);
  } catch (error) {
    if (!(error instanceof UnauthorizedError) && !String(error).includes('Unauthorized')) throw error;
    await consent(provider, transport);
    transport = make();
    return await action(transport);
  }
}

const provider = new HeadlessProvider();
const done = [];
const client = new Client(
  { name: 'rondo-ts-auth-interop', version: '1.0.0' },
  {
    versionNegotiation: { mode: { pin: MODERN } },
    capabilities: { elicitation: { form: {} } },
    inputRequired: { autoFulfill: true, maxRounds: 5 },
  },
);
client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));

let current;
const make = () => (current = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));

await signedIn(provider, make, async (t) => { await client.connect(t, { signal: AbortSignal.timeout(20000) }); });
assert.equal(client.getProtocolEra(), 'modern');
assert.equal(provider.authorizations.length, 1, 'one sign-in');
const first = provider.authorizations[0];
assert.equal(first.searchParams.get('resource'), mcpUrl.href, 'RFC 8707 resource is the MCP endpoint');
// The scope comes from the 401 challenge; the client may add offline_access on its own, since
// the AS advertises it (that is the client's business: rondo never challenges for it).
const asked = first.searchParams.get('scope').split(' ').filter((s) => s !== 'offline_access');
assert.deepEqual(asked, ['mcp:use'], 'scope taken from the 401 challenge');
assert.equal(first.searchParams.get('code_challenge_method'), 'S256');
assert.ok(provider.client?.client_id?.startsWith('client-'), 'registered dynamically');
done.push('sign-in: 401 -> PRM -> AS metadata -> DCR -> PKCE -> token');

let result = await client.callTool({ name: 'whoami', arguments: {} });
assert.match(result.content[0].text, /^johndoe via client-/);
done.push('authenticated call (whoami)');

result = await client.callTool({ name: 'greet', arguments: {} });
assert.equal(result.content[0].text, 'hello Ada (johndoe)');
done.push('MRTR flow on the protected server (greet: input_required, then complete)');

// Step-up: `write` needs files:write; the 403 names every scope it needs.
let stepped = false;
try {
  result = await client.callTool({ name: 'write', arguments: { path: 'notes.txt' } });
} catch (error) {
  stepped = true;
  assert.ok(provider.authorizations.length >= 2, `a re-authorization was started (${error})`);
  const again = provider.authorizations.at(-1);
  const scopes = new Set(again.searchParams.get('scope').split(' '));
  assert.ok(scopes.has('mcp:use') && scopes.has('files:write'), `union of scopes requested: ${[...scopes]}`);
  await consent(provider, current);
  await client.close();
  const t = make();
  await client.connect(t, { signal: AbortSignal.timeout(20000) });
  result = await client.callTool({ name: 'write', arguments: { path: 'notes.txt' } });
}
if (!stepped) {
  // The SDK may run the step-up itself when it can (then it still had to sign in again).
  assert.ok(provider.authorizations.length >= 2, 'the 403 led to a re-authorization');
}
assert.equal(result.content[0].text, 'wrote notes.txt');
done.push(`403 insufficient_scope step-up, re-authorized with mcp:use files:write (${stepped ? 'after UnauthorizedError' : 'by the SDK'})`);
await client.close();
for (const line of done) console.log(`ok - ${line}`);
