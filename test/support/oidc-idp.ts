// A real OpenID Provider for tests: oidc-provider (a certified implementation) on a free port of
// 127.0.0.1, with its own accounts, claims (email, name, groups) and amr, and confidential clients.
// Tests drive its authorization endpoint with plain HTTP (manual redirects, a cookie jar), so the
// whole code flow, discovery, JWKS and ID token signatures are the real thing.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type KoaContext } from 'oidc-provider';
import { freePort } from './free-port.js';

export interface IdpAccount {
  email: string;
  emailVerified?: boolean;
  name?: string;
  groups?: string[];
}

export interface IdpClientSpec {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** ID token lifetime (default one hour). */
  idTokenTtlSeconds?: number;
}

export interface TestIdp {
  issuer: string;
  /** Requests the provider served, by path (e.g. '/token'): round trips a relying party made. */
  requests: Map<string, number>;
  /** Registers an account; returns its subject. */
  addAccount(account: IdpAccount): string;
  /**
   * Follows an authorization URL through the provider's login as `sub` (with these amr values) and
   * returns the URL it redirects the browser back to (the redirect URI with code, state, iss), not followed.
   */
  signIn(authorizationUrl: string, sub: string, options?: { amr?: string[] }): Promise<string>;
  /** A genuine ID token issued to `clientId` (the test acting as that client), with this nonce. */
  idTokenFor(clientId: string, sub: string, nonce: string): Promise<string>;
  /** While set, rewrites the token endpoint's JSON answers (e.g. swaps the id_token). */
  tamperTokens: ((body: Record<string, unknown>, clientId: string) => Record<string, unknown>) | null;
  stop(): Promise<void>;
}

export async function startOidcIdp(options: { clients: IdpClientSpec[] }): Promise<TestIdp> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const accounts = new Map<string, IdpAccount>();
  const clients = new Map(options.clients.map((c) => [c.clientId, c]));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: `test-${randomBytes(4).toString('hex')}`, use: 'sig', alg: 'RS256' };

  const provider = new Provider(issuer, {
    clients: options.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: [c.redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    // Real providers put the e-mail in the ID token of the code flow; oidc-provider does so when told.
    conformIdTokenClaims: false,
    claims: { openid: ['sub', 'amr'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    scopes: ['openid', 'email', 'profile'],
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    ttl: {
      IdToken: (_ctx: unknown, _token: unknown, client: { clientId: string }) => clients.get(client.clientId)?.idTokenTtlSeconds ?? 3600,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 600,
      Grant: 600,
      AccessToken: 600,
    },
    findAccount: async (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: async () => ({
          sub,
          email: account.email,
          email_verified: account.emailVerified ?? true,
          name: account.name ?? account.email,
          ...(account.groups ? { groups: account.groups } : {}),
        }),
      };
    },
    // First-party clients: consent is implied, so the only interaction is the login.
    loadExistingGrant: async (ctx: { oidc: { client: { clientId: string }; session: { accountId: string } } }) => {
      const grant = new provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
  });

  const idp: TestIdp = {
    issuer,
    requests: new Map(),
    tamperTokens: null,
    addAccount(account) {
      const sub = `sub-${randomBytes(6).toString('hex')}`;
      accounts.set(sub, account);
      return sub;
    },
    signIn,
    idTokenFor,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };

  provider.use(async (ctx: KoaContext, next) => {
    await next();
    const clientId = ctx.oidc?.client?.clientId;
    if (ctx.path === '/token' && ctx.status === 200 && idp.tamperTokens && clientId && ctx.body && typeof ctx.body === 'object') {
      ctx.body = idp.tamperTokens(ctx.body as Record<string, unknown>, clientId);
    }
  });

  const serve = provider.callback();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    idp.requests.set(path, (idp.requests.get(path) ?? 0) + 1);
    if (!path.startsWith('/interaction/')) return serve(req, res);
    // The login page: the test says who signs in (?login=sub) and with which methods (?amr=pwd,mfa).
    void (async () => {
      const url = new URL(req.url ?? '/', issuer);
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name !== 'login') throw new Error(`unexpected prompt ${details.prompt.name}`);
      const amr = url.searchParams.get('amr');
      await provider.interactionFinished(req, res, {
        login: { accountId: url.searchParams.get('login'), ...(amr ? { amr: amr.split(',') } : {}) },
      }, { mergeWithLastSubmission: false });
    })().catch((err: Error) => {
      res.statusCode = 500;
      res.end(err.message);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  if ((server.address() as AddressInfo).port !== port) throw new Error('the test identity provider did not get its port');

  async function signIn(authorizationUrl: string, sub: string, opts: { amr?: string[] } = {}): Promise<string> {
    const jar = new Map<string, string>();
    let url = authorizationUrl;
    for (let hop = 0; hop < 10; hop++) {
      if (!url.startsWith(`${issuer}/`)) return url; // back to the relying party
      const target = new URL(url);
      if (target.pathname.startsWith('/interaction/')) {
        target.searchParams.set('login', sub);
        if (opts.amr) target.searchParams.set('amr', opts.amr.join(','));
      }
      const res = await fetch(target, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
      for (const cookie of res.headers.getSetCookie()) {
        const pair = cookie.split(';')[0]!;
        const eq = pair.indexOf('=');
        const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
        if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) jar.delete(name);
        else jar.set(name, value);
      }
      const location = res.headers.get('location');
      if (!location) throw new Error(`the provider answered ${res.status} without a redirect: ${(await res.text()).slice(0, 500)}`);
      url = new URL(location, target).href;
    }
    throw new Error('too many redirects at the provider');
  }

  async function idTokenFor(clientId: string, sub: string, nonce: string): Promise<string> {
    const client = clients.get(clientId)!;
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${issuer}/auth`);
    for (const [k, v] of Object.entries({
      client_id: clientId, response_type: 'code', scope: 'openid email profile', redirect_uri: client.redirectUri,
      state: randomBytes(8).toString('hex'), nonce, code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    })) authorize.searchParams.set(k, v);
    const back = new URL(await signIn(authorize.href, sub));
    const res = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${client.clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: client.redirectUri, code_verifier: verifier }),
    });
    const body = (await res.json()) as { id_token?: string };
    if (!body.id_token) throw new Error(`no ID token for ${clientId}: ${JSON.stringify(body)}`);
    return body.id_token;
  }

  return idp;
}
