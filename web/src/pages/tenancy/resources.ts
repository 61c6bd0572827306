// The tenancy resources as the API returns them, and the values their enumerated fields take.
import type { Ok } from '../../api/types';

export type Partner = Ok<'/api/v1/orgs/partners/{id}', 'get'>;
export type Organization = Ok<'/api/v1/orgs/organizations/{id}', 'get'>;
export type Site = Ok<'/api/v1/orgs/sites/{id}', 'get'>;

export const PARTNER_TYPES = ['msp', 'enterprise', 'internal'] as const;
export const PARTNER_PLANS = ['free', 'starter', 'community', 'pro', 'enterprise', 'unlimited'] as const;
export const PARTNER_STATUSES = ['pending', 'active', 'suspended', 'churned'] as const;
export const ORG_TYPES = ['customer', 'internal'] as const;
export const ORG_STATUSES = ['active', 'suspended', 'trial', 'churned'] as const;
