// A real authorization server for the tests: oauth2-mock-server (pinned in package.json) on
// loopback, signing RS256 JWTs from its JWK set, with what a production AS adds on top:
//   - RFC 8707: a `resource` in the token request becomes the access token's `aud`;
//   - RFC 7591: a tiny /register that accepts any client (consent is auto-approved anyway);
//   - RFC 7662: /introspect verifies the token with the AS's own keys and honours /revoke.
// And a control API for the tests, under /_control/ (loopback only, test use only):
//   POST /_control/mint   {claims?, expiresIn?, kid?}  -> {token}   (claims override defaults)
//   POST /_control/rotate {}                           -> {kid}     (new key, signs from now on)
//   POST /_control/ghost  {claims?}                    -> {token}   (signed by a key not in the JWKS)
//   POST /_control/sts    {clients, targets, expiresIn?} -> {}      (configure token exchange)
// RFC 8693 token exchange at /token (grant_type urn:ietf:params:oauth:grant-type:token-exchange),
// for the clients and targets (resource or audience values) set through /_control/sts: the
// subject_token must be one of this AS's own live access tokens; the issued token keeps its
// `sub` and scope (narrowed by `scope`), names the target in `aud` and the client in `act`.
// Every exchange is counted: GET /_control/sts -> {exchanges}.
// Usage: node server.mjs [port]; prints one JSON line {"issuer": ...} once listening.
import { OAuth2Server, Events } from 'oauth2-mock-server';
import { createLocalJWKSet, jwtVerify, generateKeyPair, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';

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

// Token exchange (RFC 8693): which clients may exchange, for which targets.
const sts = { clients: {}, targets: [], expiresIn: 300, exchanges: 0 };
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';

function clientOf(req, body) {
  const header = req.headers.authorization ?? '';
  if (header.startsWith('Basic ')) {
    const [id, secret] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':').map(decodeURIComponent);
    return { id, secret };
  }
  return { id: body.client_id, secret: body.client_secret };
}

async function exchange(req, res, body) {
  sts.exchanges += 1;
  const oauthError = (status, error, error_description) => {
    res.setHeader('cache-control', 'no-store');
    return send(res, status, { error, error_description });
  };
  const client = clientOf(req, body);
  if (!client.id || sts.clients[client.id] === undefined || sts.clients[client.id] !== client.secret) {
    return oauthError(401, 'invalid_client', 'client authentication failed');
  }
  if (typeof body.subject_token !== 'string' || body.subject_token_type !== ACCESS) {
    return oauthError(400, 'invalid_request', 'subject_token and an access_token subject_token_type are required');
  }
  if (body.actor_token !== undefined) return oauthError(400, 'invalid_request', 'actor tokens are not supported here');
  let subject;
  try {
    if (revoked.has(body.subject_token)) throw new Error('revoked');
    subject = await verifyOwn(body.subject_token);
  } catch {
    return oauthError(400, 'invalid_grant', 'the subject token is not valid');
  }
  const target = body.resource ?? body.audience;
  if (typeof target !== 'string' || !sts.targets.includes(target)) {
    return oauthError(400, 'invalid_target', 'the requested target is not allowed');
  }
  const granted = new Set(String(subject.scope ?? '').split(' ').filter(Boolean));
  const scope = typeof body.scope === 'string'
    ? body.scope.split(' ').filter((s) => granted.has(s)).join(' ')
    : [...granted].join(' ');
  const token = await server.issuer.buildToken({
    kid: signingKid,
    expiresIn: sts.expiresIn,
    scopesOrTransform: (header, payload) => {
      payload.sub = subject.sub;
      payload.aud = target;
      payload.scope = scope;
      payload.client_id = client.id;
      payload.act = { sub: client.id };
      payload.jti = randomUUID();
    },
  });
  res.setHeader('cache-control', 'no-store');
  return send(res, 200, { access_token: token, issued_token_type: ACCESS, token_type: 'Bearer',
                          expires_in: sts.expiresIn, scope });
}

async function control(req, res, url) {
  if (req.method === 'GET' && url.pathname === '/_control/sts') return send(res, 200, { exchanges: sts.exchanges });
  const body = await parsedForm(req);
  if (url.pathname === '/_control/sts') {
    sts.clients = body.clients ?? {};
    sts.targets = body.targets ?? [];
    sts.expiresIn = body.expiresIn ?? 300;
    sts.exchanges = 0;
    return send(res, 200, {});
  }
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
    if (url.pathname.startsWith('/_control/')) return await control(req, res, url);
    if (req.method === 'POST' && url.pathname === '/token') {
      // Read the form once; a token exchange is answered here, any other grant is replayed
      // to oauth2-mock-server's own token endpoint unchanged.
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const raw = Buffer.concat(chunks);
      const form = (req.headers['content-type'] ?? '').includes('json') ? {} : Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
      if (form.grant_type === EXCHANGE) return await exchange(req, res, form);
      const replay = Readable.from([raw]);
      Object.assign(replay, { headers: req.headers, method: req.method, url: req.url });
      return builtinHandler(replay, res);
    }
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
