// Placeholder until the section is built.
export function PartnersPage() { return <main id="main" className="page"><h1>PartnersPage</h1></main>; }
export function PartnerPage() { return <main id="main" className="page"><h1>PartnerPage</h1></main>; }
export function OrganizationsPage() { return <main id="main" className="page"><h1>OrganizationsPage</h1></main>; }
export function OrganizationPage() { return <main id="main" className="page"><h1>OrganizationPage</h1></main>; }
export function SitesPage() { return <main id="main" className="page"><h1>SitesPage</h1></main>; }
export function SitePage() { return <main id="main" className="page"><h1>SitePage</h1></main>; }
