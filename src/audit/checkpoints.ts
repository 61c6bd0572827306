// Signed checkpoints (API.md §8): every N sealed rows or T minutes per chain, and at every
// retention anchor, an Ed25519 signature over "chain X had checksum C at seq S at time T". Stored
// outside the rows they vouch for, they let an auditor holding only an export and the public key
// tell a rewritten database from an honest one.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import canonicalize from 'canonicalize';
import { ConfigError } from '../config.js';
import type { Database, Transaction } from '../db/database.js';
import { withTenant } from '../db/tenant-scope.js';
import type { Caller } from '../http/auth.js';
import { pageOf, paginated, type PaginatedResult } from '../http/pagination.js';
import { PLATFORM_CHAIN_ID } from './audit.repo.js';
import * as repo from './checkpoints.repo.js';
import { SEALER, withAuditPrivilege } from './privilege.js';
import { chainsFor } from './audit.service.js';

export interface AuditSigner {
  keyId: string;
  publicKeyPem: string;
  /** Base64 Ed25519 signature. */
  sign(data: Buffer): string;
}

/** A checkpoint as the API lists it: what was stored, without its kind. */
export type Checkpoint = Omit<repo.NewCheckpoint, 'kind'>;

export interface ChainHeadAt {
  orgId: string | null;
  seq: number;
  checksum: string;
}

export interface AuditCheckpoints {
  /** Called by the sealer inside its transaction after a batch moved the chain head. */
  afterSeal(tx: Transaction, head: ChainHeadAt): Promise<void>;
  /** A signed checkpoint for a retention anchor (the retention worker's transaction; kind 'anchor'). */
  anchor(tx: Transaction, head: ChainHeadAt): Promise<void>;
  /** Checkpoints every chain whose head moved since its last checkpoint (the timer's work; tests call it). */
  checkpointNow(): Promise<void>;
  list(caller: Caller, query: { page?: number; limit?: number; orgId?: string }): Promise<PaginatedResult<Checkpoint>>;
  publicKey(): { keyId: string; algorithm: 'Ed25519'; publicKey: string };
  start(): void;
  stop(): Promise<void>;
}

export const GENERATED_KEY_FILE = 'audit-signing-key.pem';

/**
 * The exact bytes a checkpoint signature covers: the RFC 8785 form of {orgId, seq, checksum,
 * timestamp}. Exported for verifiers.
 */
export function checkpointStatement(checkpoint: Pick<Checkpoint, 'orgId' | 'seq' | 'checksum' | 'timestamp'>): Buffer {
  const { orgId, seq, checksum, timestamp } = checkpoint;
  return Buffer.from(canonicalize({ orgId, seq, checksum, timestamp })!, 'utf8');
}

/** First 16 hex characters of the SHA-256 of the SPKI DER public key. */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
}

function signerFor(privateKey: KeyObject): AuditSigner {
  const publicKey = createPublicKey(privateKey);
  return {
    keyId: keyIdOf(publicKey),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    sign: (data) => sign(null, data, privateKey).toString('base64'),
  };
}

function parseEd25519(pem: string, source: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch (err) {
    throw new ConfigError(`${source} is not a valid PEM private key (PKCS#8 Ed25519 expected): ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new ConfigError(`${source} must be an Ed25519 private key, got ${key.asymmetricKeyType ?? 'an unknown key type'}`);
  }
  return key;
}

/**
 * Reads the generated key, or creates it. The key is written to a private temporary file and then
 * hard-linked into place: link() is exclusive like O_EXCL, and a concurrent start never reads a
 * half-written file, so every instance sharing DATA_DIR ends up with the same key.
 */
async function generatedKey(dataDir: string): Promise<KeyObject> {
  const file = path.join(dataDir, GENERATED_KEY_FILE);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const fresh = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, fresh, { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(temporary).catch(() => {});
  }
  const stored = await readFile(file, 'utf8');
  return parseEd25519(stored, `${file} (remove it to generate a new audit signing key, or set AUDIT_SIGNING_KEY)`);
}

export async function loadAuditSigner(config: { auditSigningKey: string | null; dataDir: string }): Promise<AuditSigner> {
  const key = config.auditSigningKey !== null ? parseEd25519(config.auditSigningKey, 'AUDIT_SIGNING_KEY') : await generatedKey(config.dataDir);
  return signerFor(key);
}

const HEADS_PAGE = 500;

export function createAuditCheckpoints(deps: {
  db: Database;
  signer: AuditSigner;
  everyRows: number;
  everyMinutes: number;
  now: () => number;
  log: (err: unknown, message: string) => void;
  /** Told once the transaction that stored them committed (metrics). */
  onSigned?: (kind: 'periodic' | 'anchor', count: number) => void;
}): AuditCheckpoints {
  const { db, signer, everyRows } = deps;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  function signed(head: ChainHeadAt, kind: 'periodic' | 'anchor'): repo.NewCheckpoint {
    const timestamp = new Date(deps.now()).toISOString();
    const statement = { orgId: head.orgId, seq: head.seq, checksum: head.checksum, timestamp };
    return { ...statement, keyId: signer.keyId, signature: signer.sign(checkpointStatement(statement)), kind };
  }

  async function store(tx: Transaction, checkpoints: repo.NewCheckpoint[]): Promise<void> {
    await repo.insertCheckpoints(tx, checkpoints);
    const { onSigned } = deps;
    if (onSigned && checkpoints.length > 0) tx.afterCommit(() => onSigned(checkpoints[0]!.kind, checkpoints.length));
  }

  /** One pass over every chain whose head moved since its last checkpoint, a page of chains per transaction. */
  async function checkpointMovedChains(): Promise<void> {
    let after: string | null = null;
    for (;;) {
      const heads = await withAuditPrivilege(db, SEALER, async (tx) => {
        const page = await repo.headsPastLastCheckpoint(tx, after, HEADS_PAGE);
        await store(tx, page.map((h) => signed({ orgId: h.org_id, seq: h.last_seq, checksum: h.last_checksum }, 'periodic')));
        return page;
      });
      if (heads.length < HEADS_PAGE) return;
      after = heads[heads.length - 1]!.chain_id;
    }
  }

  async function checkpointNow(): Promise<void> {
    // A pass already under way may have read the heads before the caller's rows were sealed.
    while (running) await running.catch(() => {});
    running = checkpointMovedChains();
    try {
      await running;
    } finally {
      running = null;
    }
  }

  return {
    async afterSeal(tx, head) {
      // One checkpoint at the new head when the batch crossed a multiple of everyRows since the last one.
      const last = await repo.lastCheckpointSeq(tx, head.orgId ?? PLATFORM_CHAIN_ID);
      if (Math.floor(head.seq / everyRows) > Math.floor(last / everyRows)) {
        await store(tx, [signed(head, 'periodic')]);
      }
    },

    async anchor(tx, head) {
      await store(tx, [signed(head, 'anchor')]);
    },

    checkpointNow,

    async list(caller, query) {
      const page = pageOf(query);
      const chains = chainsFor(caller, query.orgId);
      if (!chains) return paginated([], page, 0);
      const { rows, total } = await withTenant(db, caller.tenant, (tx) => repo.listCheckpoints(tx, chains, page.limit, page.offset, page.withTotal));
      return paginated(
        rows.map((r) => ({ orgId: r.org_id, seq: r.seq, checksum: r.checksum, timestamp: r.ts, keyId: r.key_id, signature: r.signature })),
        page,
        total,
      );
    },

    publicKey() {
      return { keyId: signer.keyId, algorithm: 'Ed25519', publicKey: signer.publicKeyPem };
    },

    start() {
      if (timer) return;
      timer = setInterval(() => {
        if (running) return;
        checkpointNow().catch((err: unknown) => deps.log(err, 'audit checkpoint pass failed; retrying on the next tick'));
      }, deps.everyMinutes * 60_000);
      timer.unref();
    },

    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running?.catch(() => {});
    },
  };
}
