// The sealed chain as a feed, for outbound delivery (event-destinations/, API.md §9): a chain's
// sealed entries after a seq, in seq order, in the /logs shape with the canonical fields of §8.
// Read as the service itself (system scope): the sender works for every destination.
import type { Static } from 'typebox';
import type { Database } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { logEntry } from './entries.js';
import { exportPage } from './export.repo.js';
import type { LogEntry } from './schemas.js';

export type FeedEntry = Static<typeof LogEntry> & { seq: number };

export function createAuditFeed(db: Database) {
  return {
    async sealedAfter(chainId: string, afterSeq: number, limit: number): Promise<FeedEntry[]> {
      const rows = await withTenant(db, SYSTEM_SCOPE, (tx) =>
        exportPage(tx, { orgIds: null, platformOnly: false }, { mode: 'chain', chainId, afterSeq }, limit));
      return rows.map((row) => logEntry(row) as FeedEntry);
    },
  };
}

export type AuditFeed = ReturnType<typeof createAuditFeed>;
