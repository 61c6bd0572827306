// Loads data for a screen and keeps its loading / error / data state; `reload` after a change.
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from '../api/client';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload(): void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const latest = useRef(0);

  useEffect(() => {
    const run = ++latest.current;
    setLoading(true);
    load().then(
      (value) => {
        if (run !== latest.current) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (run !== latest.current) return;
        setError(err instanceof ApiError ? err : new ApiError(0, 'CLIENT', (err as Error).message));
        setLoading(false);
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** Runs one action (a form submit, a delete) and keeps its pending / error state. */
export function useAction<A extends unknown[], T>(action: (...args: A) => Promise<T>) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = useCallback(async (...args: A): Promise<T | undefined> => {
    setPending(true);
    setError(null);
    try {
      return await action(...args);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, 'CLIENT', (err as Error).message));
      return undefined;
    } finally {
      setPending(false);
    }
  }, [action]);
  return { run, pending, error, clearError: () => setError(null) };
}

/** Calls `refresh` every `ms` while the page is visible (lists whose rows change on their own). */
export function usePolling(refresh: () => void, ms: number): void {
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') refresh();
    }, ms);
    return () => clearInterval(timer);
  }, [refresh, ms]);
}
