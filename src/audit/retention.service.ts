// Audit retention (SPEC "Audit retention policy", integrity rule 3, API.md §8): the per-organization
// policy, and the worker that deletes each chain's expired prefix in bounded batches under the
// retention role, recording the anchor (and a signed checkpoint of it) in the same transaction as
// the deletion, so /verify passes on the survivors and no surviving row is ever rewritten. With
// archiveToObjectStore the segment is first written, durably, as gzipped NDJSON with its anchors;
// a crash between archive and delete only means the next run archives the segment again.
// Two instances may run at once: each deletion locks the chain head and re-checks the anchor.
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

const gzipAsync = promisify(gzip);
const BATCH = 5000;
const DAY_MS = 86_400_000;

export interface RetentionPolicyView {
  orgId: string;
  retentionDays: number;
  archiveToObjectStore: boolean;
  lastCleanupAt: string | null;
}

export interface RetentionRunResult {
  orgId: string;
  deleted: number;
  archived: number;
  anchorSeq: number;
  error: string | null;
}

/** Test seams: fail after the archive is written and before the rows are deleted. */
export interface RetentionHooks {
  afterArchive?: (segment: { orgId: string; fromSeq: number; toSeq: number }) => void | Promise<void>;
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
}) {
  const { db } = deps;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<RetentionRunResult[]> | null = null;

  /** The organization a policy request is about: its own for organization scope, else `orgId`. */
  function policyOrg(caller: Caller, orgId: string | undefined): string {
    const target = orgId ?? (caller.scope === 'organization' ? caller.orgId : null);
    if (!target) throw new AppError('VALIDATION_FAILED', 'orgId is required: name the organization whose retention policy this is');
    if (!caller.canAccessOrg(target)) throw notFound('Organization');
    return target;
  }

  async function archiveSegment(orgId: string, fromAnchor: number, toSeq: number): Promise<number> {
    const rows = await withAuditPrivilege(db, RETENTION, (tx) => audit.sealedRowsAfter(tx, orgId, fromAnchor, toSeq, toSeq - fromAnchor));
    const anchorBefore = fromAnchor === 0 ? null : await withAuditPrivilege(db, RETENTION, (tx) => audit.sealedRowAt(tx, orgId, fromAnchor));
    const header = { segment: { orgId, fromSeq: fromAnchor + 1, toSeq, anchorBefore: anchorBefore ?? (fromAnchor === 0 ? null : { seq: fromAnchor }), archivedAt: new Date(deps.now()).toISOString() } };
    const lines = [JSON.stringify(header), ...rows.map((r) => JSON.stringify({ id: r.id, seq: r.seq, ...toChainFields(r), prevChecksum: r.prev_checksum, checksum: r.checksum }))];
    const key = `${orgId}/${String(fromAnchor + 1).padStart(12, '0')}-${String(toSeq).padStart(12, '0')}.ndjson.gz`;
    await deps.archive.put(key, await gzipAsync(Buffer.from(`${lines.join('\n')}\n`)));
    return rows.length;
  }

  /** Deletes one organization's expired prefix, batch by batch. */
  async function cleanOrganization(orgId: string, hooks: RetentionHooks, batchSize: number): Promise<RetentionRunResult> {
    const result: RetentionRunResult = { orgId, deleted: 0, archived: 0, anchorSeq: 0, error: null };
    const policy = await withTenant(db, SYSTEM_SCOPE, (tx) => repo.findPolicy(tx, orgId));
    const cutoff = new Date(deps.now() - policy.retention_days * DAY_MS);
    let anchor = await withTenant(db, SYSTEM_SCOPE, (tx) => repo.currentAnchor(tx, orgId));
    for (;;) {
      const end = await withAuditPrivilege(db, RETENTION, (tx) => repo.expiredSegmentEnd(tx, orgId, anchor, cutoff, batchSize));
      if (end === null) break;
      if (policy.archive_to_object_store) {
        try {
          result.archived += await archiveSegment(orgId, anchor, end);
        } catch (err) {
          // The store is down: nothing is deleted, the cleanup waits for the next run, and it is reported.
          result.error = `archive to ${deps.archive.location} failed: ${(err as Error).message}`;
          deps.log('error', `audit retention for organization ${orgId} postponed: ${result.error}`, err);
          break;
        }
        await hooks.afterArchive?.({ orgId, fromSeq: anchor + 1, toSeq: end });
      }
      const moved = await withAuditPrivilege(db, RETENTION, async (tx) => {
        const current = await repo.lockAnchor(tx, orgId, orgId);
        if (current !== anchor) return { anchor: current, deleted: 0 }; // another worker got here first
        const head = await repo.deleteSegment(tx, orgId, anchor, end);
        await deps.checkpoints.anchor(tx, { orgId, seq: head.seq, checksum: head.checksum });
        return { anchor: head.seq, deleted: end - anchor };
      });
      result.deleted += moved.deleted;
      anchor = moved.anchor;
    }
    result.anchorSeq = anchor;
    if (result.error === null) await withTenant(db, SYSTEM_SCOPE, (tx) => repo.markCleaned(tx, orgId, new Date(deps.now())));
    return result;
  }

  /** One pass over every chained organization (or one); `batchSize` and `hooks` are for tests. */
  async function runOnce(options: { orgId?: string; hooks?: RetentionHooks; batchSize?: number } = {}): Promise<RetentionRunResult[]> {
    const orgIds = options.orgId ? [options.orgId] : await withTenant(db, SYSTEM_SCOPE, (tx) => repo.chainedOrganizations(tx));
    const results: RetentionRunResult[] = [];
    for (const orgId of orgIds) results.push(await cleanOrganization(orgId, options.hooks ?? {}, options.batchSize ?? BATCH));
    const deleted = results.reduce((n, r) => n + r.deleted, 0);
    if (deleted > 0) deps.log('info', `audit retention deleted ${deleted} expired rows in ${results.filter((r) => r.deleted > 0).length} organizations`);
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
      const target = policyOrg(caller, orgId);
      return withTenant(db, caller.tenant, async (tx) => {
        if (!(await organizationIsLive(tx, target))) throw notFound('Organization');
        return view(await repo.findPolicy(tx, target));
      });
    },

    async putPolicy(caller: Caller, orgId: string | undefined, body: { retentionDays?: number; archiveToObjectStore?: boolean }, meta: RequestMeta): Promise<RetentionPolicyView> {
      const target = policyOrg(caller, orgId);
      if (body.retentionDays === undefined && body.archiveToObjectStore === undefined) {
        throw emptyUpdate('retentionDays or archiveToObjectStore');
      }
      return withTenant(db, caller.tenant, async (tx) => {
        if (!(await organizationIsLive(tx, target))) throw notFound('Organization');
        const before = view(await repo.findPolicy(tx, target));
        const after = view(await repo.savePolicy(tx, target, {
          retentionDays: body.retentionDays ?? before.retentionDays,
          archiveToObjectStore: body.archiveToObjectStore ?? before.archiveToObjectStore,
        }));
        const fields = (['retentionDays', 'archiveToObjectStore'] as const).filter((f) => body[f] !== undefined);
        await deps.recordAudit(tx, callerEvent(caller, meta, {
          orgId: target,
          action: 'audit.retention.update',
          resource: { type: 'audit_retention_policy', id: target, name: null },
          details: changeDetails([...fields], before, after),
        }));
        return after;
      });
    },
  };
}

export type RetentionService = ReturnType<typeof createRetentionService>;
