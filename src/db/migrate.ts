// Forward-only SQL migrations: migrations/NNNN_name.sql, each applied once in its own transaction
// and recorded with its checksum. A session advisory lock makes concurrent start-ups take turns.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface MigrationConnection {
  exec(sql: string): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  inTransaction(fn: () => Promise<void>): Promise<void>;
}

/** A migration connection over a driver's plain exec/query; BEGIN/COMMIT live only here. */
export function migrationConnection(
  exec: (sql: string) => Promise<unknown>,
  query: (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>,
): MigrationConnection {
  return {
    async exec(sql) {
      await exec(sql);
    },
    query,
    async inTransaction(fn) {
      await exec('BEGIN');
      try {
        await fn();
        await exec('COMMIT');
      } catch (err) {
        await exec('ROLLBACK');
        throw err;
      }
    },
  };
}

export interface MigrationFile {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

const MIGRATION_LOCK_KEY = 7_300_001; // any constant shared by every instance of the service
const FILE_PATTERN = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export function readMigrations(dir: string): MigrationFile[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
  const migrations = files.map((file) => {
    const match = FILE_PATTERN.exec(file);
    if (!match) throw new Error(`migration file name "${file}" does not match NNNN_name.sql`);
    const sql = readFileSync(path.join(dir, file), 'utf8');
    return {
      version: Number(match[1]),
      name: match[2]!,
      sql,
      checksum: createHash('sha256').update(sql).digest('hex'),
    };
  });
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations must be numbered 0001, 0002, …; found ${m.version} at position ${i + 1}`);
  });
  return migrations;
}

export async function migrate(conn: MigrationConnection, dir: string, log?: (message: string) => void): Promise<number> {
  const migrations = readMigrations(dir);
  await conn.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    await conn.exec(`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`);
    const applied = new Map(
      (await conn.query('select version, checksum from schema_migrations')).map((r) => [Number(r.version), String(r.checksum)]),
    );
    let count = 0;
    for (const m of migrations) {
      const checksum = applied.get(m.version);
      if (checksum !== undefined) {
        if (checksum !== m.checksum) {
          throw new Error(`migration ${m.version}_${m.name} was changed after it was applied; add a new migration instead`);
        }
        continue;
      }
      await conn.inTransaction(async () => {
        await conn.exec(m.sql);
        await conn.query('insert into schema_migrations (version, name, checksum) values ($1, $2, $3)', [m.version, m.name, m.checksum]);
      });
      log?.(`applied migration ${String(m.version).padStart(4, '0')}_${m.name}`);
      count++;
    }
    return count;
  } finally {
    await conn.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
  }
}
