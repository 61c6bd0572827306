// The KEYS section: API keys (/api-keys) and enrollment keys (/enrollment-keys).
import './keys.css';

export { ApiKeysPage } from './ApiKeysPage';
export { EnrollmentKeysPage } from './EnrollmentKeysPage';
