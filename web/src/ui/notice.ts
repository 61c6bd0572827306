// The outcome of an action, said until the user's next action and no longer: a form submitted or a
// button pressed anywhere on the page clears every notice shown, so an earlier "saved" is never read
// as the outcome of what was done after it. Disclosures (buttons with aria-expanded), copy buttons
// and the one-time secret reveals are not actions in this sense and leave notices alone.
import { useEffect, useState } from 'react';

const clearers = new Set<() => void>();
let listening = false;

function isLaterAction(event: Event): boolean {
  if (event.type === 'submit') return true;
  const target = event.target as Element | null;
  const button = typeof target?.closest === 'function' ? target.closest('button') : null;
  return button !== null && !button.hasAttribute('aria-expanded') && !button.closest('.secret-reveal, .secret, [data-keeps-notice]');
}

function clearAll(event: Event) {
  if (isLaterAction(event)) for (const clear of clearers) clear();
}

/**
 * A notice's state: set it with the outcome when an action ends; it clears itself when the next one
 * starts (capture phase, so before that action's own handlers, which may set a new outcome).
 */
export function useNotice<T = string>(initial: T | null = null): [T | null, (value: T | null) => void] {
  const [notice, setNotice] = useState<T | null>(initial);
  useEffect(() => {
    if (!listening) {
      document.addEventListener('submit', clearAll, true);
      document.addEventListener('click', clearAll, true);
      listening = true;
    }
    const clear = () => setNotice(null);
    clearers.add(clear);
    return () => {
      clearers.delete(clear);
    };
  }, []);
  return [notice, setNotice];
}
