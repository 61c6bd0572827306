// Where the retention worker archives a chain segment before deleting it, for a policy with
// archiveToObjectStore: the filesystem under DATA_DIR/audit-archive by default, or an S3-compatible
// bucket. `put` resolves only once the object is durable (fsync'd and renamed into place, or
// acknowledged by S3), so the worker never deletes rows whose archive could still be lost.
import { mkdir, open, rename } from 'node:fs/promises';
import path from 'node:path';

export interface ArchiveStore {
  /** Writes the object under `key` (a relative path of safe characters); replaces an older copy. */
  put(key: string, body: Buffer): Promise<void>;
  /** Where archives go, for logs and the README. */
  readonly location: string;
}

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

function checkKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`unsafe archive key "${key}"`);
}

export function createFileArchiveStore(root: string): ArchiveStore {
  return {
    location: root,
    async put(key, body) {
      checkKey(key);
      const target = path.join(root, key);
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      const temporary = `${target}.partial-${process.pid}`;
      const file = await open(temporary, 'w', 0o600);
      try {
        await file.writeFile(body);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, target);
      // The rename itself must survive a crash too.
      const dir = await open(path.dirname(target), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    },
  };
}

export function createS3ArchiveStore(s3: { bucket: string; endpoint: string | null; region: string; prefix: string }): ArchiveStore {
  // Loaded only when configured: the SDK is large and most installs archive to disk.
  const client = import('@aws-sdk/client-s3').then(({ S3Client, PutObjectCommand }) => ({
    s3: new S3Client({ region: s3.region, ...(s3.endpoint ? { endpoint: s3.endpoint, forcePathStyle: true } : {}) }),
    PutObjectCommand,
  }));
  return {
    location: `s3://${s3.bucket}/${s3.prefix}`,
    async put(key, body) {
      checkKey(key);
      const { s3: api, PutObjectCommand } = await client;
      await api.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${s3.prefix}${key}`, Body: body, ContentType: 'application/x-ndjson', ContentEncoding: 'gzip' }));
    },
  };
}

export function createArchiveStore(config: { dataDir: string; s3: { bucket: string; endpoint: string | null; region: string; prefix: string } | null }): ArchiveStore {
  return config.s3 ? createS3ArchiveStore(config.s3) : createFileArchiveStore(path.join(config.dataDir, 'audit-archive'));
}
