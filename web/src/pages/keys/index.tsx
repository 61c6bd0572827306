// Placeholder until the section is built.
export function ApiKeysPage() { return <main id="main" className="page"><h1>ApiKeysPage</h1></main>; }
export function EnrollmentKeysPage() { return <main id="main" className="page"><h1>EnrollmentKeysPage</h1></main>; }
