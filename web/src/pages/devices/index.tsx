// The devices section: the device list (/devices) and one device with its tabs (/devices/:deviceId/*).
import './devices.css';

export { DevicesPage } from './DevicesPage';
export { DevicePage } from './DevicePage';
