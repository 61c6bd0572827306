// What each audit action means, in words a technician reads at a glance. Keyed by the service's
// action catalogue, so a new action fails the console's type check until it has a label here.
import type { AuditAction } from '../../api/types';

export const ACTION_LABELS: Record<AuditAction, string> = {
  'api_key.create': 'API key created',
  'api_key.update': 'API key changed',
  'api_key.rotate': 'API key rotated',
  'api_key.revoke': 'API key revoked',
  'event_destination.create': 'Event destination created',
  'event_destination.update': 'Event destination changed',
  'event_destination.delete': 'Event destination deleted',
  'event_destination.rotate_secret': 'Event destination secret rotated',
  'event_destination.replay': 'Event destination replay started',
  'event_destination.failing': 'Event destination failing',
  'enrollment_key.create': 'Enrollment key created',
  'enrollment_key.rotate': 'Enrollment key rotated',
  'enrollment_key.delete': 'Enrollment key deleted',
  'partner.create': 'Partner created',
  'partner.update': 'Partner changed',
  'partner.delete': 'Partner deleted',
  'partner.settings.update': 'Partner settings changed',
  'organization.create': 'Organization created',
  'organization.update': 'Organization changed',
  'organization.delete': 'Organization deleted',
  'site.create': 'Site created',
  'site.update': 'Site changed',
  'site.delete': 'Site deleted',
  'agent.eventlogs.submit': 'Agent sent event logs',
  'agent.source.ip.changed': 'Agent address changed',
  'user.login': 'Signed in',
  'user.login.failed': 'Sign-in failed',
  'user.logout': 'Signed out',
  'user.permission.change': 'User permissions changed',
  'user.create': 'User created',
  'user.update': 'User changed',
  'user.delete': 'User deleted',
  'user.mfa.enable': 'MFA turned on',
  'device.create': 'Device enrolled',
  'device.update': 'Device moved',
  'device.delete': 'Device decommissioned',
  'device.eventlogs.query': 'Live event log queried',
  'audit.retention.update': 'Audit retention changed',
  'data.export': 'Audit log exported',
  'policy.create': 'Policy created',
  'policy.update': 'Policy changed',
  'policy.evaluate': 'Policy evaluated',
  'automation.policy.evaluate': 'Automation policy evaluated',
  'script.execute': 'Script run',
  'data.access': 'Data accessed',
};

export const AUDIT_ACTIONS = Object.keys(ACTION_LABELS) as AuditAction[];

/** The label of a catalogue action; an action stored before the catalogue knew it shows as itself. */
export const actionLabel = (action: string): string => ACTION_LABELS[action as AuditAction] ?? action;
