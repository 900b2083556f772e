// A real authorization server for the tests: oauth2-mock-server (pinned in package.json) on
// loopback, signing RS256 JWTs from its JWK set, with what a production AS adds on top:
//   - RFC 8707: a `resource` in the token request becomes the access token's `aud`;
//   - RFC 7591: a tiny /register that accepts any client (consent is auto-approved anyway);
//   - RFC 7662: /introspect verifies the token with the AS's own keys and honours /revoke.
// And a control API for the tests, under /_control/ (loopback only, test use only):
//   POST /_control/mint   {claims?, expiresIn?, kid?}  -> {token}   (claims override defaults)
//   POST /_control/rotate {}                           -> {kid}     (new key, signs from now on)
//   POST /_control/ghost  {claims?}                    -> {token}   (signed by a key not in the JWKS)
// Usage: node server.mjs [port]; prints one JSON line {"issuer": ...} once listening.
import { OAuth2Server, Events } from 'oauth2-mock-server';
import { createLocalJWKSet, jwtVerify, generateKeyPair, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';

const port = Number(process.argv[2] ?? 0);
const server = new OAuth2Server();
let signingKid = 'key-1';
await server.issuer.keys.generate('RS256', { kid: signingKid });
const revoked = new Set();
const service = server.service;

function readJson(req) {
  return typeof req.body === 'object' && req.body !== null ? req.body : {};
}
function send(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

// What the user approved at /authorize (scope, resource), by code, for the token request.
const grants = new Map();
service.on(Events.BeforeAuthorizeRedirect, (redirect, req) => {
  const code = redirect.url.searchParams.get('code');
  if (code) grants.set(code, { scope: req.query.scope, resource: req.query.resource, client_id: req.query.client_id });
});

service.on(Events.BeforeTokenSigning, (token, req) => {
  const body = req.body ?? {};
  const grant = typeof body.code === 'string' ? grants.get(body.code) : undefined;
  const resource = body.resource ?? grant?.resource;
  if (typeof resource === 'string') token.payload.aud = resource;
  const clientId = body.client_id ?? grant?.client_id;
  if (typeof clientId === 'string') token.payload.client_id = clientId;
  if (body.grant_type === 'authorization_code' && typeof grant?.scope === 'string' && body.scope === undefined) {
    token.payload.scope = grant.scope;
  }
});

service.on(Events.BeforeResponse, (response, req) => {
  const body = req.body ?? {};
  const grant = typeof body.code === 'string' ? grants.get(body.code) : undefined;
  if (grant && body.scope === undefined && typeof grant.scope === 'string') response.body.scope = grant.scope;
});

service.on(Events.BeforeWellKnownOpenIdConfiguration, (response) => {
  response.body.registration_endpoint = `${server.issuer.url}/register`;
  response.body.token_endpoint_auth_methods_supported = ['none', 'client_secret_post', 'client_secret_basic'];
  response.body.scopes_supported = ['mcp:use', 'files:read', 'files:write', 'admin', 'offline_access'];
  response.body.authorization_response_iss_parameter_supported = false;
});

service.addRoute('POST', '/register', (req, res) => {
  const body = readJson(req);
  send(res, 201, { ...body, client_id: `client-${randomUUID()}`, client_id_issued_at: Math.floor(Date.now() / 1000) });
});

// /revoke and /introspect are answered by the wrapper below (the built-in introspection says
// every token is active); everything else goes to oauth2-mock-server's own routes.
const builtinHandler = service.requestHandler;
async function parsedForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const raw = Buffer.concat(chunks).toString('utf8');
  if ((req.headers['content-type'] ?? '').includes('json')) {
    try { return JSON.parse(raw); } catch { return {}; }
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

async function verifyOwn(token) {
  const jwks = createLocalJWKSet({ keys: server.issuer.keys.toJSON() });
  const { payload } = await jwtVerify(token, jwks, { issuer: server.issuer.url });
  return payload;
}

async function control(req, res, url) {
  const body = await parsedForm(req);
  if (url.pathname === '/_control/mint') {
    const kid = body.kid ?? signingKid;
    const token = await server.issuer.buildToken({
      kid,
      expiresIn: body.expiresIn ?? 3600,
      scopesOrTransform: (header, payload) => {
        payload.sub = 'alice';
        payload.jti = randomUUID();
        Object.assign(payload, body.claims ?? {});
        for (const [k, v] of Object.entries(payload)) if (v === null) delete payload[k];
      },
    });
    return send(res, 200, { token });
  }
  if (url.pathname === '/_control/rotate') {
    signingKid = `key-${randomUUID().slice(0, 8)}`;
    await server.issuer.keys.generate('RS256', { kid: signingKid });
    return send(res, 200, { kid: signingKid });
  }
  if (url.pathname === '/_control/ghost') {
    const { privateKey } = await generateKeyPair('RS256');
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ iss: server.issuer.url, sub: 'alice', iat: now, exp: now + 3600, ...(body.claims ?? {}) })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'ghost-key' })
      .sign(privateKey);
    return send(res, 200, { token });
  }
  return send(res, 404, { error: 'not_found' });
}

const handler = async (req, res) => {
  const url = new URL(req.url, 'http://localhost');
  try {
    if (req.method === 'POST' && url.pathname.startsWith('/_control/')) return await control(req, res, url);
    if (req.method === 'POST' && (url.pathname === '/revoke' || url.pathname === '/introspect')) {
      const body = await parsedForm(req);
      if (url.pathname === '/revoke') {
        if (typeof body.token === 'string') revoked.add(body.token);
        res.writeHead(200, { 'content-length': 0 });
        return res.end();
      }
      let answer = { active: false };
      if (typeof body.token === 'string' && !revoked.has(body.token)) {
        try { answer = { active: true, ...(await verifyOwn(body.token)) }; } catch { /* inactive */ }
      }
      return send(res, 200, answer);
    }
  } catch (err) {
    return send(res, 500, { error: 'server_error', error_description: String(err) });
  }
  return builtinHandler(req, res);
};

const { createServer } = await import('node:http');
const http = createServer(handler);
await new Promise((resolve) => http.listen(port, '127.0.0.1', resolve));
const actual = http.address().port;
server.issuer.url = `http://127.0.0.1:${actual}`;
process.stdout.write(JSON.stringify({ issuer: server.issuer.url }) + '\n');
const stop = () => http.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
