// Audit retention (SPEC "Audit retention policy", integrity rule 3, API.md §8): the policy of each
// chain (an organization's, or the platform chain's), and the worker that deletes each chain's
// expired prefix in bounded batches on the retention login, recording the anchor (and a signed
// checkpoint of it) in the same transaction as the deletion, so /verify passes on the survivors and
// no surviving row is ever rewritten. With archiveToObjectStore the segment is first written,
// durably, as gzipped NDJSON with its anchors; a crash between archive and delete only means the
// next run archives the segment again.
// Two instances may run at once: each deletion locks the chain's anchor and re-checks it.
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { AppError, emptyUpdate, notFound } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import type { ArchiveStore } from './archive-store.js';
import type { AuditCheckpoints } from './checkpoints.js';
import { callerEvent, changeDetails, type RecordAudit } from './recorder.js';
import * as audit from './audit.repo.js';
import * as repo from './retention.repo.js';
import { organizationIsLive } from '../db/tenant-lookups.js';
import { RETENTION, withAuditPrivilege } from './privilege.js';
import { toChainFields } from './sealer.js';
import { PLATFORM_CHAIN_ID } from './audit.repo.js';

const gzipAsync = promisify(gzip);
const BATCH = 5000;
const DAY_MS = 86_400_000;

export interface RetentionPolicyView {
  /** null: the platform chain. */
  orgId: string | null;
  retentionDays: number;
  archiveToObjectStore: boolean;
  lastCleanupAt: string | null;
}

export interface RetentionRunResult {
  orgId: string | null;
  deleted: number;
  archived: number;
  anchorSeq: number;
  error: string | null;
}

/** Test seams: fail after the archive is written and before the rows are deleted. */
export interface RetentionHooks {
  afterArchive?: (segment: { orgId: string | null; fromSeq: number; toSeq: number }) => void | Promise<void>;
}

const view = (row: repo.PolicyRow): RetentionPolicyView => ({
  orgId: row.org_id,
  retentionDays: row.retention_days,
  archiveToObjectStore: row.archive_to_object_store,
  lastCleanupAt: row.last_cleanup_at?.toISOString() ?? null,
});

export function createRetentionService(deps: {
  db: Database;
  recordAudit: RecordAudit;
  archive: ArchiveStore;
  checkpoints: Pick<AuditCheckpoints, 'anchor'>;
  intervalMinutes: number;
  now: () => number;
  log: (level: 'info' | 'warn' | 'error', message: string, err?: unknown) => void;
  /** After each pass (metrics): postponed when an archive failed and a chain waits for the next run. */
  onRun?: (outcome: 'completed' | 'postponed' | 'failed', rowsRemoved: number) => void;
}) {
  const { db } = deps;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<RetentionRunResult[]> | null = null;

  /**
   * The chain a policy request is about: the caller's organization for organization scope, else
   * `orgId`, where "platform" (system scope only) names the platform chain, as it does for /logs.
   */
  function policyChain(caller: Caller, orgId: string | undefined): repo.ChainRef {
    if (orgId === 'platform') {
      if (caller.scope !== 'system') throw notFound('Chain');
      return { chainId: PLATFORM_CHAIN_ID, orgId: null };
    }
    const target = orgId ?? (caller.scope === 'organization' ? caller.orgId : null);
    if (!target) throw new AppError('VALIDATION_FAILED', 'orgId is required: name the organization (or "platform") whose retention policy this is');
    if (!caller.canAccessOrg(target)) throw notFound('Organization');
    return { chainId: target, orgId: target };
  }

  /**
   * Writes the segment's archive; null when its rows are no longer all there: another worker
   * archived and deleted them since this one chose the segment, and its archive (same name) must
   * not be replaced by one with fewer rows.
   */
  async function archiveSegment(chain: repo.ChainRef, fromAnchor: number, toSeq: number): Promise<number | null> {
    const { chainId, orgId } = chain;
    // The row before the segment is gone (the anchor is the last row deleted): its checksum is the anchor's.
    const anchor = fromAnchor === 0 ? null : await withAuditPrivilege(db, RETENTION, (tx) => repo.anchorOf(tx, chainId));
    const anchorBefore = fromAnchor === 0 ? null : anchor?.seq === fromAnchor ? anchor : { seq: fromAnchor };
    const rows = await withAuditPrivilege(db, RETENTION, (tx) => audit.sealedRowsAfter(tx, chainId, fromAnchor, toSeq, toSeq - fromAnchor));
    if (rows.length !== toSeq - fromAnchor) return null;
    const header = { segment: { orgId, fromSeq: fromAnchor + 1, toSeq, anchorBefore, archivedAt: new Date(deps.now()).toISOString() } };
    const lines = [JSON.stringify(header), ...rows.map((r) => JSON.stringify({ id: r.id, seq: r.seq, ...toChainFields(r), prevChecksum: r.prev_checksum, checksum: r.checksum }))];
    const key = `${orgId ?? 'platform'}/${String(fromAnchor + 1).padStart(12, '0')}-${String(toSeq).padStart(12, '0')}.ndjson.gz`;
    await deps.archive.put(key, await gzipAsync(Buffer.from(`${lines.join('\n')}\n`)));
    return rows.length;
  }

  /** Deletes one chain's expired prefix, batch by batch. */
  async function cleanChain(chain: repo.ChainRef, hooks: RetentionHooks, batchSize: number): Promise<RetentionRunResult> {
    const { chainId, orgId } = chain;
    const result: RetentionRunResult = { orgId, deleted: 0, archived: 0, anchorSeq: 0, error: null };
    const policy = await withTenant(db, SYSTEM_SCOPE, (tx) => repo.findPolicy(tx, chain));
    const cutoff = new Date(deps.now() - policy.retention_days * DAY_MS);
    let anchor = await withTenant(db, SYSTEM_SCOPE, (tx) => repo.currentAnchor(tx, chainId));
    for (;;) {
      const end = await withAuditPrivilege(db, RETENTION, (tx) => repo.expiredSegmentEnd(tx, chainId, anchor, cutoff, batchSize));
      if (end === null) break;
      if (policy.archive_to_object_store) {
        let archived: number | null;
        try {
          archived = await archiveSegment(chain, anchor, end);
        } catch (err) {
          // The store is down: nothing is deleted, the cleanup waits for the next run, and it is reported.
          result.error = `archive to ${deps.archive.location} failed: ${(err as Error).message}`;
          deps.log('error', `audit retention for ${orgId ? `organization ${orgId}` : 'the platform chain'} postponed: ${result.error}`, err);
          break;
        }
        if (archived === null) {
          // Another worker deleted (part of) the segment, so it moved the anchor (the database
          // deletes nothing above it): carry on from there.
          anchor = await withTenant(db, SYSTEM_SCOPE, (tx) => repo.currentAnchor(tx, chainId));
          continue;
        }
        result.archived += archived;
        await hooks.afterArchive?.({ orgId, fromSeq: anchor + 1, toSeq: end });
      }
      const moved = await withAuditPrivilege(db, RETENTION, async (tx) => {
        const current = await repo.lockAnchor(tx, chain);
        if (current !== anchor) return { anchor: current, deleted: 0 }; // another worker got here first
        const head = await repo.deleteSegment(tx, chainId, anchor, end);
        await deps.checkpoints.anchor(tx, { orgId, seq: head.seq, checksum: head.checksum });
        return { anchor: head.seq, deleted: end - anchor };
      });
      result.deleted += moved.deleted;
      anchor = moved.anchor;
    }
    result.anchorSeq = anchor;
    if (result.error === null) await withAuditPrivilege(db, RETENTION, (tx) => repo.markCleaned(tx, chain, new Date(deps.now())));
    return result;
  }

  /**
   * One pass over every chain, the platform's included (or over one: an organization id, or
   * "platform"); `batchSize` and `hooks` are for tests.
   */
  async function runOnce(options: { orgId?: string; hooks?: RetentionHooks; batchSize?: number } = {}): Promise<RetentionRunResult[]> {
    const results: RetentionRunResult[] = [];
    try {
      const chains: repo.ChainRef[] = options.orgId === 'platform'
        ? [{ chainId: PLATFORM_CHAIN_ID, orgId: null }]
        : options.orgId
          ? [{ chainId: options.orgId, orgId: options.orgId }]
          : await withTenant(db, SYSTEM_SCOPE, (tx) => repo.chains(tx));
      for (const chain of chains) results.push(await cleanChain(chain, options.hooks ?? {}, options.batchSize ?? BATCH));
    } catch (err) {
      // The chains cleaned before the failure stay cleaned: their rows are gone and counted.
      deps.onRun?.('failed', results.reduce((n, r) => n + r.deleted, 0));
      throw err;
    }
    const deleted = results.reduce((n, r) => n + r.deleted, 0);
    deps.onRun?.(results.some((r) => r.error !== null) ? 'postponed' : 'completed', deleted);
    if (deleted > 0) deps.log('info', `audit retention deleted ${deleted} expired rows in ${results.filter((r) => r.deleted > 0).length} chains`);
    return results;
  }

  return {
    runOnce,

    start() {
      if (deps.intervalMinutes === 0 || timer) return;
      timer = setInterval(() => {
        if (running) return;
        running = runOnce().catch((err: unknown) => {
          deps.log('error', 'audit retention run failed', err);
          return [];
        }).finally(() => {
          running = null;
        });
      }, deps.intervalMinutes * 60_000).unref();
    },

    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },

    async getPolicy(caller: Caller, orgId: string | undefined): Promise<RetentionPolicyView> {
      const chain = policyChain(caller, orgId);
      return withTenant(db, caller.tenant, async (tx) => {
        if (chain.orgId && !(await organizationIsLive(tx, chain.orgId))) throw notFound('Organization');
        return view(await repo.findPolicy(tx, chain));
      });
    },

    async putPolicy(caller: Caller, orgId: string | undefined, body: { retentionDays?: number; archiveToObjectStore?: boolean }, meta: RequestMeta): Promise<RetentionPolicyView> {
      const chain = policyChain(caller, orgId);
      if (body.retentionDays === undefined && body.archiveToObjectStore === undefined) {
        throw emptyUpdate('retentionDays or archiveToObjectStore');
      }
      return withTenant(db, caller.tenant, async (tx) => {
        if (chain.orgId && !(await organizationIsLive(tx, chain.orgId))) throw notFound('Organization');
        const before = view(await repo.findPolicy(tx, chain));
        const after = view(await repo.savePolicy(tx, chain, {
          retentionDays: body.retentionDays ?? before.retentionDays,
          archiveToObjectStore: body.archiveToObjectStore ?? before.archiveToObjectStore,
        }));
        const fields = (['retentionDays', 'archiveToObjectStore'] as const).filter((f) => body[f] !== undefined);
        await deps.recordAudit(tx, callerEvent(caller, meta, {
          orgId: chain.orgId,
          action: 'audit.retention.update',
          resource: { type: 'audit_retention_policy', id: chain.chainId, name: chain.orgId ? null : 'platform' },
          details: changeDetails([...fields], before, after),
        }));
        return after;
      });
    },
  };
}

export type RetentionService = ReturnType<typeof createRetentionService>;
