// The USERS section: the people who sign in, within the admin's reach (/users, API.md §3, §10).
import './users.css';

export { UsersPage } from './UsersPage';
export { UserPage } from './UserPage';
