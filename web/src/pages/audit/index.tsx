// Placeholder until the section is built.
export function AuditPage() { return <main id="main" className="page"><h1>AuditPage</h1></main>; }
export function AuditEntryPage() { return <main id="main" className="page"><h1>AuditEntryPage</h1></main>; }
