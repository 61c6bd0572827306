// Placeholder until the section is built.
export function DevicesPage() { return <main id="main" className="page"><h1>DevicesPage</h1></main>; }
export function DevicePage() { return <main id="main" className="page"><h1>DevicePage</h1></main>; }
