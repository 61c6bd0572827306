-- Sign-in attempts also count per client address (an IPv4 address, or the /64 of an IPv6 one), so
-- one client cannot make the service hash passwords without limit by trying e-mail after e-mail.
-- 'refused' marks a try refused by the per-account limit: it counts against its address (it may
-- have written an audit row) but not against the account, whose lock ends when its window does.
-- Rows from before this migration have no address and count for their e-mail only.
ALTER TABLE login_attempts ADD COLUMN client_key text;
ALTER TABLE login_attempts DROP CONSTRAINT login_attempts_outcome_check;
ALTER TABLE login_attempts ADD CONSTRAINT login_attempts_outcome_check CHECK (outcome IN ('pending', 'failed', 'refused'));
CREATE INDEX login_attempts_client ON login_attempts (client_key, attempted_at);
