// The offline verifier on exports built here: every order an export can come in, every way a chain
// can be broken, checkpoints, the file formats, the CLI's exit codes, and its isolation from the service.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import canonicalize from 'canonicalize';
import { checksumOf } from '../audit/hash-chain.js';
import { keyIdOf } from './checkpoints.js';
import { runCli } from './cli.js';
import { verifyExport, type VerifyReport } from './verify-export.js';

type Row = Record<string, unknown> & { id: string; orgId: string | null; seq: number | null; checksum: string | null; prevChecksum: string | null };

const dir = mkdtempSync(path.join(os.tmpdir(), 'audit-verify-'));
let files = 0;
const file = (text: string) => {
  const name = path.join(dir, `export-${++files}`);
  writeFileSync(name, text);
  return name;
};
const ndjson = (rows: Row[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
// The service's json layout: one entry per line inside the envelope.
const jsonExport = (rows: Row[]) => `{"data":[\n${rows.map((r) => JSON.stringify(r)).join(',\n')}\n],"count":${rows.length},"nextAfterSeq":null}\n`;

/** Recomputes checksum and link from the row's fields, as the sealer does. */
function seal(row: Row, seq: number, prevChecksum: string | null): Row {
  const sealed = { ...row, seq, prevChecksum };
  return { ...sealed, checksum: checksumOf(sealed as never) };
}

/** A chain of `count` rows in /logs shape, from `firstSeq` (after an unknown anchor when > 1). */
function chain(orgId: string | null, count: number, firstSeq = 1): Row[] {
  const rows: Row[] = [];
  let prev: string | null = firstSeq === 1 ? null : 'f'.repeat(64);
  for (let i = 0; i < count; i++) {
    const base: Row = {
      id: randomUUID(), timestamp: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, i)).toISOString(),
      user: { id: null, name: null, email: null, role: null }, action: 'device.update',
      resource: { type: 'device', id: null, name: `host ${i}` }, category: 'device', result: 'success',
      ipAddress: '203.0.113.9', userAgent: 'test "agent", v1', details: { n: i, nested: { ü: [1, 2.5, 'x'] }, empty: {} },
      orgId, seq: null, actorType: 'system', actorId: null, actorEmail: null, resourceType: 'device', resourceId: null,
      resourceName: `host ${i}`, errorMessage: null, checksum: null, prevChecksum: null,
    };
    const sealed = seal(base, firstSeq + i, prev);
    prev = sealed.checksum;
    rows.push(sealed);
  }
  return rows;
}

/** An attacker with the database: changes a row and recomputes the chain from there on. */
function rewrite(rows: Row[], index: number, change: Partial<Row>): Row[] {
  const out = rows.slice(0, index);
  let prev = index === 0 ? null : rows[index - 1]!.checksum;
  for (let i = index; i < rows.length; i++) {
    const sealed = seal(i === index ? { ...rows[i]!, ...change } : rows[i]!, rows[i]!.seq!, prev);
    prev = sealed.checksum;
    out.push(sealed);
  }
  return out;
}

const verify = (text: string) => verifyExport({ file: file(text) });
const brokenAt = (report: VerifyReport) => report.chains.map((c) => c.brokenAt && { seq: c.brokenAt.seq, reason: c.brokenAt.reason }).filter(Boolean);

describe('offline verifier', () => {
  const org = randomUUID();

  it('verifies a chain in seq order, newest first, shuffled nearby, and in both file formats', async () => {
    const rows = chain(org, 300);
    const locallyShuffled = rows.map((r, i) => ({ r, k: i + Math.random() * 5 })).sort((a, b) => a.k - b.k).map((x) => x.r);
    for (const text of [ndjson(rows), ndjson([...rows].reverse()), ndjson(locallyShuffled), jsonExport(rows), JSON.stringify({ data: rows }, null, 2)]) {
      const report = await verify(text);
      assert.equal(report.valid, true, JSON.stringify({ chains: report.chains, problems: report.problems.slice(0, 3) }));
      assert.deepEqual(
        { orgId: report.chains[0]!.orgId, rows: report.chains[0]!.rows, firstSeq: report.chains[0]!.firstSeq, lastSeq: report.chains[0]!.lastSeq, mid: report.chains[0]!.startsMidChain },
        { orgId: org, rows: 300, firstSeq: 1, lastSeq: 300, mid: false },
      );
    }
    assert.equal((await verify(jsonExport(rows))).format, 'json');
  });

  it('keeps chains apart, skips pending rows, and accepts a chain that starts after an anchor', async () => {
    const other = chain(null, 20, 101);
    const pending = { ...chain(org, 1)[0]!, id: randomUUID(), seq: null, checksum: null, prevChecksum: null };
    const mixed = chain(org, 40).flatMap((r, i) => (other[i] ? [r, other[i]!] : [r]));
    const report = await verify(ndjson([...mixed, pending]));
    assert.equal(report.valid, true);
    const [platform, mine] = [report.chains.find((c) => c.orgId === null)!, report.chains.find((c) => c.orgId === org)!];
    assert.deepEqual([platform.rows, platform.firstSeq, platform.lastSeq, platform.startsMidChain], [20, 101, 120, true]);
    assert.deepEqual([mine.rows, mine.pending], [40, 1]);
  });

  it('names the first bad seq: a changed field, a re-hashed row, a deleted row, a repeated seq', async () => {
    const rows = chain(org, 10);
    const changed = rows.map((r) => (r.seq === 5 ? { ...r, resourceName: 'forged' } : r));
    assert.deepEqual(brokenAt(await verify(ndjson(changed))), [{ seq: 5, reason: 'checksum_mismatch' }]);
    assert.deepEqual(brokenAt(await verify(ndjson([...changed].reverse()))), [{ seq: 5, reason: 'checksum_mismatch' }]);

    const rehashed = rows.map((r) => (r.seq === 5 ? seal({ ...r, details: { n: -1 } }, 5, r.prevChecksum) : r));
    assert.deepEqual(brokenAt(await verify(ndjson(rehashed))), [{ seq: 6, reason: 'prev_checksum_mismatch' }]);

    const deleted = rows.filter((r) => r.seq !== 5 && r.seq !== 6);
    const report = await verify(ndjson(deleted.reverse()));
    assert.deepEqual(brokenAt(report), [{ seq: 7, reason: 'seq_gap' }]);
    assert.match(report.chains[0]!.brokenAt!.detail, /seqs 5\.\.6 missing/);

    assert.deepEqual(brokenAt(await verify(ndjson([...rows, rows[3]!]))), [{ seq: 4, reason: 'duplicate_seq' }]);
    const forgedStart = [seal(rows[0]!, 1, 'a'.repeat(64)), ...rows.slice(1)];
    assert.deepEqual(brokenAt(await verify(ndjson(forgedStart))).slice(0, 1), [{ seq: 1, reason: 'prev_checksum_mismatch' }]);
  });

  it('reports malformed entries and truncated json exports', async () => {
    const rows = chain(org, 3);
    const loneSurrogate = JSON.stringify({ ...rows[2], details: { s: '\ud800' } });
    const bad = await verify(`${JSON.stringify(rows[0])}\nnot json\n${JSON.stringify({ ...rows[1], details: 'x' })}\n${loneSurrogate}\n`);
    assert.equal(bad.valid, false);
    assert.deepEqual(bad.problems.map((p) => p.line), [2, 3, 4]);
    assert.match(bad.problems[2]!.detail, /no canonical form/);
    const truncated = await verify(jsonExport(rows).split('\n').slice(0, 3).join('\n'));
    assert.equal(truncated.valid, false);
    assert.match(truncated.problems[0]!.detail, /truncated/);
    const padded = await verify(jsonExport(rows).replace('"count":3', '"count":4'));
    assert.equal(padded.valid, false);
  });

  it('gives the same verdict, line numbers included, whether chunks are checked here or in worker threads', async () => {
    const rows = chain(org, 3000); // about 3 MiB: several chunks
    const lines = rows.map((r) => (r.seq === 2000 ? { ...r, resourceName: 'forged' } : r)).map((r) => JSON.stringify(r));
    lines.splice(2500, 0, '{"broken": ');
    const name = file(lines.join('\n') + '\n');
    const verdicts = [];
    for (const threads of [0, 1, 1, 2]) {
      const report = await verifyExport({ file: name, threads });
      verdicts.push({ chains: brokenAt(report), rows: report.chains[0]!.rows, problems: report.problems.map((p) => p.line) });
    }
    assert.deepEqual(verdicts[0], { chains: [{ seq: 2000, reason: 'checksum_mismatch' }], rows: 3000, problems: [2501] });
    for (const verdict of verdicts) assert.deepEqual(verdict, verdicts[0]);
  });

  describe('with signed checkpoints', () => {
    const keys = generateKeyPairSync('ed25519');
    const pem = keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const signed = (row: Row, key: KeyObject = keys.privateKey) => {
      const statement = { orgId: row.orgId, seq: row.seq, checksum: row.checksum, timestamp: '2026-01-02T03:04:06.000Z' };
      return { ...statement, keyId: keyIdOf(keys.publicKey), signature: sign(null, Buffer.from(canonicalize(statement)!), key).toString('base64') };
    };
    const rows = chain(org, 10);
    const run = (text: string, checkpoints: unknown, publicKey = pem) =>
      verifyExport({ file: file(text), checkpointsFile: file(JSON.stringify(checkpoints)), publicKeyFile: file(publicKey) });

    it('verifies each signature and the exported row at its seq', async () => {
      const report = await run(ndjson(rows), { data: [signed(rows[9]!), signed(rows[4]!)] });
      assert.equal(report.valid, true, JSON.stringify({ chains: report.chains, problems: report.problems.slice(0, 3) }));
      assert.deepEqual(report.chains[0]!.checkpoints, { matched: 2, outsideExport: 0, invalid: 0 });
      const asJson = await run(ndjson(rows.slice(0, 6)), [signed(rows[9]!), signed(rows[4]!)], JSON.stringify({ keyId: keyIdOf(keys.publicKey), algorithm: 'Ed25519', publicKey: pem }));
      assert.equal(asJson.valid, true);
      assert.deepEqual(asJson.chains[0]!.checkpoints, { matched: 1, outsideExport: 1, invalid: 0 });
    });

    it('fails a forged signature and a chain rewritten under a checkpoint', async () => {
      const forged = { ...signed(rows[7]!), checksum: 'b'.repeat(64) };
      assert.deepEqual(brokenAt(await run(ndjson(rows), { data: [signed(rows[2]!), forged] })), [{ seq: 8, reason: 'checkpoint_signature_invalid' }]);
      const otherKey = generateKeyPairSync('ed25519').privateKey;
      assert.deepEqual(brokenAt(await run(ndjson(rows), { data: [signed(rows[2]!, otherKey)] })), [{ seq: 3, reason: 'checkpoint_signature_invalid' }]);
      // Consistent on its own, but not what was signed at seq 9.
      const rewritten = rewrite(rows, 6, { resourceName: 'forged' });
      assert.equal((await verify(ndjson(rewritten))).valid, true);
      assert.deepEqual(brokenAt(await run(ndjson(rewritten), { data: [signed(rows[3]!), signed(rows[8]!)] })), [{ seq: 9, reason: 'checkpoint_mismatch' }]);
    });
  });

  describe('command line', () => {
    const rows = chain(org, 5);
    const cli = async (...argv: string[]) => {
      let out = '';
      let err = '';
      const code = await runCli(argv, (t) => (out += t), (t) => (err += t));
      return { code, out, err };
    };

    it('exits 0 when valid, 1 naming the first bad seq, 2 on usage errors', async () => {
      const good = await cli('--file', file(ndjson(rows)));
      assert.equal(good.code, 0, good.err);
      assert.match(good.out, new RegExp(`chain ${org}: 5 rows, seq 1\\.\\.5: OK`));
      const bad = await cli('--file', file(ndjson(rows.filter((r) => r.seq !== 2))));
      assert.equal(bad.code, 1);
      assert.match(bad.out, /first bad seq 3: seq_gap/);
      assert.equal(JSON.parse((await cli('--json', '--file', file(ndjson(rows)))).out).valid, true);
      for (const argv of [[], ['--file'], ['--nope'], ['--threads', 'x', '--file', file(ndjson(rows))], ['--file', path.join(dir, 'missing')], ['--file', file(ndjson(rows)), '--checkpoints', file('[]')],
        ['--file', file('id,orgId,seq,timestamp\r\n')], ['--file', file(ndjson(rows)), '--checkpoints', file('[]'), '--public-key', file('not a key')]]) {
        const result = await cli(...argv);
        assert.equal(result.code, 2, `${argv.join(' ')}: ${result.out}`);
        assert.match(result.err, /usage:/);
      }
    });

    it('runs as `npm run audit:verify` does', () => {
      const main = path.join(import.meta.dirname, 'main.ts');
      const run = (f: string) => spawnSync(process.execPath, ['--import', 'tsx', main, '--file', f], { encoding: 'utf8' });
      assert.equal(run(file(ndjson(rows))).status, 0);
      const tampered = run(file(ndjson(rows.map((r) => (r.seq === 4 ? { ...r, action: 'x' } : r)))));
      assert.equal(tampered.status, 1);
      assert.match(tampered.stdout, /first bad seq 4: checksum_mismatch/);
    });

    it('imports nothing from the service but the pure hash-chain module and the worker starter', () => {
      for (const name of readdirSync(import.meta.dirname).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
        const source = readFileSync(path.join(import.meta.dirname, name), 'utf8');
        for (const [, specifier] of source.matchAll(/from '([^']+)'/g)) {
          assert.ok(!specifier!.startsWith('..') || ['../audit/hash-chain.js', '../worker-thread.js'].includes(specifier!), `${name} imports ${specifier}`);
        }
      }
    });
  });
});
