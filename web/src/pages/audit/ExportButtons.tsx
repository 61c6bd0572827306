// Export of the entries the current filters select (GET /audit-logs/export), for audit:export holders:
// a compact row beside the entries' heading.
import { useId, useState } from 'react';
import { download } from '../../api/client';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import type { Filters } from './query';

type Format = 'csv' | 'ndjson';

export function ExportButtons({ filters, orgLabel, searching }: {
  filters: Filters;
  /** What the export covers, for partner and system callers; null for an organization caller. */
  orgLabel: string | null;
  searching: boolean;
}) {
  const hintId = useId();
  const [done, setDone] = useState<string | null>(null);
  const [running, setRunning] = useState<Format | null>(null);
  const exporter = useAction(async (format: Format) => {
    setDone(null);
    setRunning(format);
    try {
      const filename = exportFilename(format, filters.orgId);
      await download('/api/v1/audit-logs/export', { format, ...filters } as Record<string, string>, filename);
      setDone(`Downloaded ${filename}.`);
    } finally {
      setRunning(null);
    }
  });

  const covers = `Up to 10,000 entries${orgLabel ? ` of ${orgLabel}` : ''} that match the filters, newest first.${searching ? ' The search text is not applied to exports: only the filters are.' : ''}`;
  return (
    <div className="audit-export" role="group" aria-label="Export the entries" aria-describedby={hintId}>
      <button type="button" disabled={exporter.pending} onClick={() => void exporter.run('csv')}>
        {running === 'csv' ? 'Exporting CSV…' : 'Export CSV'}
      </button>
      <button type="button" disabled={exporter.pending} onClick={() => void exporter.run('ndjson')}>
        {running === 'ndjson' ? 'Exporting NDJSON…' : 'Export NDJSON'}
      </button>
      <span id={hintId} className="hint">{covers}</span>
      <span className="hint" role="status">{done}</span>
      <ErrorMessage error={exporter.error} />
    </div>
  );
}

function exportFilename(format: Format, orgId: string | undefined): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return `audit-${orgId ? `${orgId}-` : ''}${stamp}.${format}`;
}
