-- Identity housekeeping: sessions that ended (expired or revoked) more than a grace period ago go,
-- with their refresh tokens (ON DELETE CASCADE), and so do sign-in attempts long past their
-- 15-minute window. These indexes let the hourly cleanup find them without scanning the tables.
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX sessions_revoked ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX login_attempts_time ON login_attempts (attempted_at);
