// The ACCOUNT section: the signed-in user's own sessions, MFA, recovery codes and password (/account, API.md §10).
import '../users/users.css';

export { AccountPage } from './AccountPage';
