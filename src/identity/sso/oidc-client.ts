// The relying-party side of OpenID Connect, through openid-client (no hand-written JOSE): the
// issuer's discovery document, the authorization URL, and the code exchange with every ID token
// check (signature against the provider's JWKS, issuer, audience, nonce, expiry, PKCE, state).
// Discovery documents and JWKS are cached per issuer for a few minutes, so a sign-in costs one
// round trip to the provider (the token request) beyond its own pages.
import * as oidc from 'openid-client';
import { isLoopbackHost } from './sso-config.js';

/** How long a discovery document (and the JWKS fetched with it) is reused. */
export const DISCOVERY_TTL_MS = 5 * 60_000;
const TIMEOUT_SECONDS = 10;
const CACHED_ISSUERS = 1000;

export interface IdpClient {
  issuer: string;
  clientId: string;
  /** null: a public client (PKCE only). */
  clientSecret: string | null;
}

/** The provider could not be used; `message` says why, in words that carry no secret. */
export class IdpError extends Error {}

interface IssuerEntry {
  metadata: oidc.ServerMetadata;
  loadedAt: number;
  jwks: oidc.ExportedJWKSCache | undefined;
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection closed before the response ended',
  UND_ERR_SOCKET: 'connection closed before the response ended',
  ENOTFOUND: 'host name does not resolve',
  EAI_AGAIN: 'host name does not resolve',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

/** A short description of what went wrong with the provider: never a token, a secret or a body. */
export function describeIdpFailure(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; error?: string; status?: number; cause?: { code?: string; message?: string; status?: number } };
  if (err instanceof oidc.ResponseBodyError) return `the provider answered HTTP ${err.status} ${err.error}`;
  if (err instanceof oidc.AuthorizationResponseError) return `the provider returned error ${err.error}`;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${TIMEOUT_SECONDS} seconds`;
  const network = NETWORK_CODES[e?.cause?.code ?? ''] ?? NETWORK_CODES[e?.code ?? ''];
  if (network) return network;
  if (e?.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' && typeof e.cause?.status === 'number') return `unexpected HTTP status ${e.cause.status}`;
  if (e?.name === 'TypeError' && e.message === 'fetch failed') return `connection failed${e.cause?.message ? ` (${e.cause.message})` : ''}`.slice(0, 300);
  const detail = typeof e?.cause?.message === 'string' && e.cause.message !== e.message ? `: ${e.cause.message}` : '';
  return `${e?.message ?? String(err)}${detail}`.slice(0, 300);
}

export function createOidcClient(deps: { now: () => number }) {
  const issuers = new Map<string, IssuerEntry>();
  const loading = new Map<string, Promise<IssuerEntry>>();
  const plainHttp = (url: string) => new URL(url).protocol === 'http:' && isLoopbackHost(new URL(url).hostname);

  async function load(issuer: string, clientId: string): Promise<IssuerEntry> {
    try {
      const config = await oidc.discovery(new URL(issuer), clientId, undefined, oidc.None(), {
        timeout: TIMEOUT_SECONDS,
        // Only a loopback issuer may be plain http (API.md §10); the document's endpoints follow it.
        ...(plainHttp(issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
      });
      // serverMetadata() adds a helper function, which the Configuration constructor cannot clone.
      const { supportsPKCE: _helper, ...metadata } = config.serverMetadata();
      if (!metadata.authorization_endpoint || !metadata.token_endpoint) throw new IdpError('the discovery document names no authorization or token endpoint');
      if (!metadata.jwks_uri) throw new IdpError('the discovery document names no jwks_uri: ID token signatures could not be checked');
      if (metadata.response_types_supported && !metadata.response_types_supported.includes('code')) {
        throw new IdpError('the provider does not support the authorization code flow (response_type "code")');
      }
      const entry = { metadata, loadedAt: deps.now(), jwks: undefined };
      issuers.delete(issuer);
      issuers.set(issuer, entry);
      if (issuers.size > CACHED_ISSUERS) issuers.delete(issuers.keys().next().value!);
      return entry;
    } catch (err) {
      if (err instanceof IdpError) throw err;
      throw new IdpError(`its discovery document (${discoveryUrl(issuer)}) could not be loaded: ${describeIdpFailure(err)}`);
    }
  }

  /** The issuer's metadata: cached unless `fresh`; parallel loads of one issuer share one request. */
  function entryFor(issuer: string, clientId: string, fresh = false): Promise<IssuerEntry> {
    const cached = issuers.get(issuer);
    if (!fresh && cached && deps.now() - cached.loadedAt < DISCOVERY_TTL_MS) return Promise.resolve(cached);
    const pending = loading.get(issuer);
    if (pending) return pending;
    const started = load(issuer, clientId).finally(() => loading.delete(issuer));
    loading.set(issuer, started);
    return started;
  }

  function configurationOf(entry: IssuerEntry, client: IdpClient): oidc.Configuration {
    const methods = entry.metadata.token_endpoint_auth_methods_supported;
    // RFC 8414: without a list, client_secret_basic is what the provider supports.
    const auth = client.clientSecret === null
      ? oidc.None()
      : !methods || methods.includes('client_secret_basic') || !methods.includes('client_secret_post')
        ? oidc.ClientSecretBasic(client.clientSecret)
        : oidc.ClientSecretPost(client.clientSecret);
    const config = new oidc.Configuration(entry.metadata, client.clientId, {
      // ID token times are judged by the service's clock.
      [oidc.clockSkew]: Math.round((deps.now() - Date.now()) / 1000),
    }, auth);
    config.timeout = TIMEOUT_SECONDS;
    if (plainHttp(client.issuer)) oidc.allowInsecureRequests(config);
    // openid-client checks ID token signatures only when asked to; the JWKS is cached per issuer.
    oidc.enableNonRepudiationChecks(config);
    if (entry.jwks) oidc.setJwksCache(config, entry.jwks);
    return config;
  }

  return {
    /** Loads the issuer's discovery document afresh (a configuration being written or tested); IdpError says what failed. */
    async check(client: IdpClient): Promise<oidc.ServerMetadata> {
      return (await entryFor(client.issuer, client.clientId, true)).metadata;
    },

    /** The authorization request: code flow, PKCE S256, state, nonce. */
    async authorizationUrl(client: IdpClient, p: { redirectUri: string; state: string; nonce: string; codeVerifier: string; loginHint: string }): Promise<string> {
      const config = configurationOf(await entryFor(client.issuer, client.clientId), client);
      const url = oidc.buildAuthorizationUrl(config, {
        response_type: 'code',
        redirect_uri: p.redirectUri,
        scope: 'openid email profile',
        state: p.state,
        nonce: p.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(p.codeVerifier),
        code_challenge_method: 'S256',
        login_hint: p.loginHint,
      });
      return url.href;
    },

    /**
     * The provider's answer at the callback (`currentUrl`: the redirect URI with its query) traded
     * for tokens; returns the verified ID token's claims. IdpError for anything that fails.
     */
    async exchange(client: IdpClient, currentUrl: URL, checks: { state: string; nonce: string; codeVerifier: string }): Promise<Record<string, unknown>> {
      const entry = await entryFor(client.issuer, client.clientId);
      const config = configurationOf(entry, client);
      try {
        const tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          pkceCodeVerifier: checks.codeVerifier,
          idTokenExpected: true,
        });
        const claims = tokens.claims();
        if (!claims) throw new IdpError('the token response carries no ID token');
        return { ...claims };
      } catch (err) {
        if (err instanceof IdpError) throw err;
        throw new IdpError(describeIdpFailure(err));
      } finally {
        entry.jwks = oidc.getJwksCache(config) ?? entry.jwks;
      }
    },
  };
}

export type OidcClient = ReturnType<typeof createOidcClient>;

function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}
