// The event destination shapes as the API gives them (API.md §9), and what the screens derive from
// them: what a destination covers, whether it needs attention, and the filter as text.
import type { Organization, Partner } from '../../api/directory';
import type { paths } from '../../api/schema';
import type { Ok } from '../../api/types';

export type Destination = Ok<'/api/v1/event-destinations/{id}', 'get'>;
export type NewDestination = Ok<'/api/v1/event-destinations', 'post'>;
export type Delivery = Ok<'/api/v1/event-destinations/{id}/deliveries', 'get'>['data'][number];
export type TestResult = Ok<'/api/v1/event-destinations/{id}/test', 'post'>;
export type CreateBody = paths['/api/v1/event-destinations']['post']['requestBody']['content']['application/json'];
export type UpdateBody = NonNullable<paths['/api/v1/event-destinations/{id}']['patch']['requestBody']>['content']['application/json'];
export type Kind = Destination['kind'];
export type Result = Destination['filter']['results'][number];

/** Every result the filter offers; a Record over the schema's union, so a new one fails the build until it is here. */
export const RESULT_LABELS: Record<Result, string> = { success: 'Success', failure: 'Failure', denied: 'Denied' };
export const RESULTS = Object.keys(RESULT_LABELS) as Result[];

export const SECRET_WARNING = 'Store this signing secret now: it is shown only once and cannot be retrieved again. Your receiver needs it to check the webhook-signature header of every delivery.';
export const ROTATED_WARNING = 'Store this new signing secret now: it is shown only once. For the next 24 hours every delivery is signed with both the old and the new secret, so update your receiver within that time.';

/** The names a destination's owner ids are shown by. */
export interface Directory {
  orgs: Organization[];
  partners: Partner[];
  /**
   * Whether a partner user reaches every organization of the partner (may create partner-wide
   * destinations); null when the console cannot tell (the user may not read user accounts).
   */
  wholePartner: boolean | null;
}

export function orgLabel(directory: Directory | undefined, id: string): string {
  return directory?.orgs.find((o) => o.id === id)?.name ?? id;
}

export function partnerLabel(directory: Directory | undefined, id: string): string {
  return directory?.partners.find((p) => p.id === id)?.name ?? id;
}

/** What a destination covers, in words: an organization, a whole partner, or the platform. */
export function coverageLabel(d: Pick<Destination, 'orgId' | 'partnerId'>, directory: Directory | undefined): string {
  if (d.orgId) return orgLabel(directory, d.orgId);
  if (d.partnerId) return `All organizations of ${partnerLabel(directory, d.partnerId)}`;
  return 'Platform';
}

/** A destination whose most recent attempt failed (failing or not yet): the error is worth showing. */
export function lastAttemptFailed(d: Destination): boolean {
  if (!d.lastFailureAt) return false;
  return !d.lastSuccessAt || Date.parse(d.lastFailureAt) > Date.parse(d.lastSuccessAt);
}

/** The schema's action pattern: an exact name, or a prefix ending in `*`. */
const ACTION = /^[a-z0-9_.]+\*?$/;
const ACTION_MAX = 128;
const ACTIONS_MAX = 100;

/** The actions textarea: names separated by commas or lines, checked as the schema checks them. */
export function parseActions(text: string): { actions: string[]; error?: string } {
  const actions = [...new Set(text.split(/[\s,]+/).map((a) => a.trim()).filter(Boolean))];
  const bad = actions.find((a) => a.length > ACTION_MAX || !ACTION.test(a));
  if (bad) return { actions, error: `“${bad}” is not an action name: use lower-case letters, digits, _ and ., optionally ending in * (api_key.*).` };
  if (actions.length > ACTIONS_MAX) return { actions, error: `At most ${ACTIONS_MAX} actions (now ${actions.length}).` };
  return { actions };
}

/** The URL schemes each kind takes (API.md §9); http:// only where the service allows private addresses. */
export function urlError(kind: Kind, url: string): string | undefined {
  const text = url.trim();
  if (!text) return 'Enter the address deliveries go to.';
  if (kind === 'webhook' && !/^https?:\/\/\S+$/i.test(text)) return 'A webhook address starts with https:// (or http:// on a private network the service allows).';
  if (kind === 'syslog' && !/^syslog\+(tls|tcp):\/\/[^\s/]+:\d+\/?$/i.test(text)) return 'A syslog address is syslog+tls://host:port or syslog+tcp://host:port.';
  return undefined;
}

export function certificateError(pem: string): string | undefined {
  if (pem.trim() && !pem.includes('-----BEGIN CERTIFICATE-----')) return 'Paste a PEM certificate (-----BEGIN CERTIFICATE----- …).';
  return undefined;
}

export function nameError(name: string): string | undefined {
  if (!name.trim()) return 'Enter a name.';
  if (name.length > 255) return `At most 255 characters (now ${name.length}).`;
  return undefined;
}
