// The one-time reveal of a secret (API key, enrollment key): shown once, with a copy button.
import { useState, type ReactNode } from 'react';

export function SecretReveal({ title, secret, warning, children, onDone }: {
  title: string;
  secret: string;
  warning: string;
  children?: ReactNode;
  onDone: () => void;
}) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async (text: string, what: string) => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(what);
    } catch {
      setCopied('failed');
    }
  };
  return (
    <section className="secret-reveal" aria-labelledby="secret-title">
      <h2 id="secret-title">{title}</h2>
      <p className="warning" role="note">{warning}</p>
      <div className="secret">
        <code data-testid="revealed-secret">{secret}</code>
        <button type="button" onClick={() => copy(secret, 'secret')}>Copy</button>
      </div>
      {children}
      <p aria-live="polite" className="hint">{copied === 'failed' ? 'Copy failed: select the text and copy it by hand.' : copied ? 'Copied to the clipboard.' : ''}</p>
      <button type="button" className="primary" onClick={onDone}>I have stored it</button>
    </section>
  );
}

