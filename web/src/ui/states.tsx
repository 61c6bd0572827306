// Loading, empty and error states every screen shows the same way.
import type { ReactNode } from 'react';
import type { ApiError } from '../api/client';
import type { Loaded } from './use-load';

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return <p className="state state-loading" role="status" aria-live="polite">{label}</p>;
}

export function ErrorMessage({ error, onRetry }: { error: ApiError | null | undefined; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <div className="state state-error" role="alert">
      <strong>{headline(error)}</strong> {error.message}
      {onRetry && <button type="button" className="link" onClick={onRetry}>Try again</button>}
    </div>
  );
}

function headline(error: ApiError): string {
  if (error.status === 0) return 'Connection lost.';
  if (error.status === 403) return 'Not allowed.';
  if (error.status === 404) return 'Not found.';
  if (error.status === 429) return 'Too many requests.';
  if (error.status >= 500) return 'Server error.';
  return 'Refused.';
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state state-empty">{children}</p>;
}

/** Renders a loaded value, or its loading / error / empty state. */
export function Loadable<T>({ state, isEmpty, empty, children }: {
  state: Loaded<T>;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (state.error) return <ErrorMessage error={state.error} onRetry={state.reload} />;
  if (state.data === undefined) return <Spinner />;
  if (isEmpty?.(state.data)) return <Empty>{empty ?? 'Nothing here yet.'}</Empty>;
  return <>{children(state.data)}</>;
}
