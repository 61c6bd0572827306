import { Link } from 'react-router';

export function NotFoundPage() {
  return (
    <main id="main" className="page">
      <h1>Page not found</h1>
      <p>There is no console page at this address.</p>
      <Link to="/">Go to the overview</Link>
    </main>
  );
}
