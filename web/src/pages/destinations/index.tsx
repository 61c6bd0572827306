// The DESTINATIONS section: outbound audit events to webhooks and syslog (/destinations, API.md §9).
import './destinations.css';

export { DestinationsPage } from './DestinationsPage';
export { DestinationPage } from './DestinationPage';
