// Signed checkpoints (API.md §8): `signature` is the base64 Ed25519 signature of the RFC 8785 form
// of {orgId, seq, checksum, timestamp}. The public key comes as PEM (SPKI) or as the JSON body of
// GET /audit-logs/public-key; checkpoints as the JSON body of GET /audit-logs/checkpoints.
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import canonicalize from 'canonicalize';
import { UsageError } from './export-reader.js';

export interface Checkpoint {
  orgId: string | null;
  seq: number;
  checksum: string;
  timestamp: string;
  keyId: string | null;
  signature: string;
}

export interface PublicKey {
  key: KeyObject;
  keyId: string;
}

/** The service's key id: the first 16 hex characters of the SHA-256 of the SPKI DER form. */
export function keyIdOf(key: KeyObject): string {
  return createHash('sha256').update(key.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the ${what} ${file}: ${(err as Error).message}`);
  }
}

export function parsePublicKey(text: string, source: string): PublicKey {
  let pem = text;
  let keyId: string | null = null;
  if (text.trimStart().startsWith('{')) {
    let body: { keyId?: unknown; algorithm?: unknown; publicKey?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new UsageError(`${source} is neither a PEM public key nor the JSON of /audit-logs/public-key`);
    }
    if (typeof body.publicKey !== 'string') throw new UsageError(`${source} has no publicKey`);
    if (body.algorithm !== undefined && body.algorithm !== 'Ed25519') throw new UsageError(`${source}: algorithm ${String(body.algorithm)} is not Ed25519`);
    pem = body.publicKey;
    keyId = typeof body.keyId === 'string' ? body.keyId : null;
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch (err) {
    throw new UsageError(`${source} is not a PEM public key: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new UsageError(`${source} is a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
  return { key, keyId: keyId ?? keyIdOf(key) };
}

export async function loadPublicKey(file: string): Promise<PublicKey> {
  return parsePublicKey(await readText(file, 'public key'), file);
}

function isCheckpoint(value: unknown): value is Checkpoint {
  const c = value as Record<string, unknown> | null;
  return (
    typeof c === 'object' && c !== null &&
    (c.orgId === null || typeof c.orgId === 'string') &&
    Number.isSafeInteger(c.seq) && (c.seq as number) >= 1 &&
    typeof c.checksum === 'string' && typeof c.timestamp === 'string' && typeof c.signature === 'string' &&
    (c.keyId === undefined || c.keyId === null || typeof c.keyId === 'string')
  );
}

/** `{data: [checkpoint]}` (one page of /checkpoints), or a bare array (pages put together). */
export function parseCheckpoints(text: string, source: string): Checkpoint[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new UsageError(`${source} is not JSON (expected the body of GET /audit-logs/checkpoints)`);
  }
  const list = Array.isArray(body) ? body : (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(list)) throw new UsageError(`${source} holds no checkpoint list ({"data": [...]})`);
  return list.map((c, i) => {
    if (!isCheckpoint(c)) throw new UsageError(`${source}: checkpoint ${i + 1} is not {orgId, seq, checksum, timestamp, keyId, signature}`);
    return { orgId: c.orgId, seq: c.seq, checksum: c.checksum, timestamp: c.timestamp, keyId: c.keyId ?? null, signature: c.signature };
  });
}

export async function loadCheckpoints(file: string): Promise<Checkpoint[]> {
  return parseCheckpoints(await readText(file, 'checkpoints file'), file);
}

/** null when the signature holds; otherwise why not. */
export function checkpointSignatureProblem(checkpoint: Checkpoint, publicKey: PublicKey): string | null {
  if (checkpoint.keyId !== null && checkpoint.keyId !== publicKey.keyId) {
    return `signed with key ${checkpoint.keyId}, not with the given key ${publicKey.keyId}`;
  }
  const { orgId, seq, checksum, timestamp } = checkpoint;
  const statement = Buffer.from(canonicalize({ orgId, seq, checksum, timestamp })!, 'utf8');
  const signature = Buffer.from(checkpoint.signature, 'base64');
  let valid = false;
  try {
    valid = verify(null, statement, publicKey.key, signature);
  } catch {
    valid = false;
  }
  return valid ? null : 'the signature does not verify with the given public key';
}
