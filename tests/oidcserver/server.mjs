// A real OpenID Connect provider (oidc-provider, pinned in package.json) for the facade's tests:
// one static confidential client (the facade), NO dynamic registration, on a loopback port.
// Sign-in and consent are automated: /interaction/:uid signs in the user set by
// POST /test/next-user {"user": "alice"} (default alice) and grants what was asked.
// Usage: node server.mjs CONFIG_JSON   (prints {"issuer": ...} on stdout once listening)
import http from 'node:http';
import Provider from 'oidc-provider';

const cfg = JSON.parse(process.argv[2] || '{}');
const port = cfg.port || 0;
const people = {
  alice: { sub: 'alice', name: 'Alice Liddell', email: 'alice@example.com', email_verified: true },
  bob: { sub: 'bob', name: 'Bob Builder', email: 'bob@example.com', email_verified: true },
};
let nextUser = 'alice';
let signIns = 0;

const server = http.createServer();
server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: cfg.client_id || 'rondo-facade',
      client_secret: cfg.client_secret || 'facade-secret-at-the-idp',
      redirect_uris: cfg.redirect_uris || [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    features: {
      registration: { enabled: false },
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      resourceIndicators: { enabled: false },
    },
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    claims: { openid: ['sub'], profile: ['name'], email: ['email', 'email_verified'] },
    pkce: { required: () => true },
    ttl: { AccessToken: cfg.access_ttl || 600, IdToken: 600, RefreshToken: 86400, Interaction: 600, Session: 600, Grant: 86400 },
    issueRefreshToken: async () => true,
    rotateRefreshToken: () => true,
    findAccount: async (_ctx, id) => people[id] && { accountId: id, claims: async () => people[id] },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['a test cookie key, not a secret'] },
  });
  provider.on('server_error', (_ctx, err) => process.stderr.write(`server_error ${err}\n`));
  const callback = provider.callback();

  server.on('request', async (req, res) => {
    try {
      if (req.url === '/test/next-user' && req.method === 'POST') {
        let body = '';
        for await (const chunk of req) body += chunk;
        nextUser = JSON.parse(body).user;
        res.writeHead(204).end();
        return;
      }
      if (req.url === '/test/stats') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ signIns }));
        return;
      }
      if (req.url.startsWith('/interaction/')) {
        const details = await provider.interactionDetails(req, res);
        const { prompt, params } = details;
        if (prompt.name === 'login') {
          signIns += 1;
          await provider.interactionFinished(req, res, { login: { accountId: nextUser } }, { mergeWithLastSubmission: false });
          return;
        }
        const grant = details.grantId
          ? await provider.Grant.find(details.grantId)
          : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
        if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
        if (prompt.details.missingOIDCClaims) grant.addOIDCClaims(prompt.details.missingOIDCClaims);
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
        return;
      }
      callback(req, res);
    } catch (err) {
      process.stderr.write(`interaction error ${err}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  process.stdout.write(JSON.stringify({ issuer }) + '\n');
});
