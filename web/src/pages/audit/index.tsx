// The audit section: the log with search, filters, chain integrity and export (/audit), and one
// entry (/audit/:entryId).
import './audit.css';

export { AuditPage } from './AuditPage';
export { AuditEntryPage } from './AuditEntryPage';
