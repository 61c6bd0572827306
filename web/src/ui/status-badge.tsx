// The one badge for a status word: devices, keys, partners and organizations, audit results, log
// levels, event destinations and their deliveries. The word is shown as the API gives it; the
// colour only repeats it.
type Tone = 'ok' | 'warn' | 'bad' | 'muted' | 'plain';

const TONES: Record<string, Tone> = {
  online: 'ok', active: 'ok', success: 'ok', delivered: 'ok',
  pending: 'warn', trial: 'warn', exhausted: 'warn', denied: 'warn', warning: 'warn', warn: 'warn', changed: 'warn',
  expired: 'bad', suspended: 'bad', failure: 'bad', failing: 'bad', failed: 'bad', error: 'bad', critical: 'bad',
  offline: 'muted', revoked: 'muted', disabled: 'muted', churned: 'muted', debug: 'muted', verbose: 'muted',
  // Ordinary log levels stay in the text colour, so the levels that need attention stand out.
  info: 'plain', information: 'plain',
};

export function StatusBadge({ status }: { status: string }) {
  const tone = (Object.hasOwn(TONES, status) ? TONES[status] : undefined) ?? 'muted';
  return <span className={tone === 'plain' ? 'badge' : `badge badge-${tone}`}>{status}</span>;
}
