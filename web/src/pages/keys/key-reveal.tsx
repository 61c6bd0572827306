// A new key, shown once: after "I have stored it" nothing on the page holds it any more.
import { useEffect, useRef, useState } from 'react';
import { SecretReveal } from '../../ui/secret-reveal';

export interface Revealed { title: string; secret: string; warning: string; command?: string }

export function KeyReveal({ revealed, onDone }: { revealed: Revealed; onDone: () => void }) {
  const region = useRef<HTMLDivElement>(null);
  useEffect(() => region.current?.focus(), [revealed]);
  return (
    <div ref={region} tabIndex={-1}>
      <SecretReveal title={revealed.title} secret={revealed.secret} warning={revealed.warning} onDone={onDone}>
        {revealed.command && <CopyableCommand label="Start the reference agent with this key" command={revealed.command} />}
      </SecretReveal>
    </div>
  );
}

function CopyableCommand({ label, command }: { label: string; command: string }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(command);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div>
      <p>{label}:</p>
      <div className="secret">
        <code data-testid="agent-command">{command}</code>
        <button type="button" onClick={() => void copy()}>Copy command</button>
      </div>
      <p className="hint" aria-live="polite">{copied === null ? '' : copied ? 'Command copied to the clipboard.' : 'Copy failed: select the command and copy it by hand.'}</p>
    </div>
  );
}
