// The tenancy section: partners (system scope), organizations and sites.
import './tenancy.css';

export { PartnersPage } from './PartnersPage';
export { PartnerPage } from './PartnerPage';
export { OrganizationsPage } from './OrganizationsPage';
export { OrganizationPage } from './OrganizationPage';
export { SitesPage } from './SitesPage';
export { SitePage } from './SitePage';
