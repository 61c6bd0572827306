// A realistic, deterministic sample of Windows-style event logs, so the reference agent can answer
// live queries on any operating system. The same seed, hostname and `now` always give the same
// entries (seeded PRNG), which lets tests rely on exact counts and records.
import type { LiveEventLogDescriptor, LiveEventLogEntry, LiveLevel } from '../live-queries/protocol.js';

export interface SampleEventLog {
  descriptor: LiveEventLogDescriptor;
  /** Ascending by recordId, and therefore by timeCreated. */
  entries: LiveEventLogEntry[];
}

export interface SampleOptions {
  seed?: number;
  hostname?: string;
  /** Time of the newest entry (ms since the epoch). Fix it for reproducible timestamps. */
  now?: number;
  /** Days of history the entries span. */
  spanDays?: number;
}

/** mulberry32: tiny, fast, and good enough for sample data. Returns floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Template {
  source: string;
  eventId: number;
  level: LiveLevel;
  category: string;
  /** Relative frequency within its log. */
  weight: number;
  /** `{name}` placeholders are filled from FILLERS. */
  message: string;
  /** 'system' = NT AUTHORITY\SYSTEM, 'person' = a domain user, null = no user. */
  user: 'system' | 'person' | null;
}

interface LogSpec {
  name: string;
  displayName: string;
  entryCount: number;
  maxSize: number;
  retentionDays: number;
  firstRecordId: number;
  templates: Template[];
}

const T = (source: string, eventId: number, level: LiveLevel, category: string, weight: number, message: string, user: Template['user'] = null): Template =>
  ({ source, eventId, level, category, weight, message, user });

const LOGS: LogSpec[] = [
  {
    name: 'Application', displayName: 'Application', entryCount: 3200, maxSize: 20_971_520, retentionDays: 0, firstRecordId: 48_211,
    templates: [
      T('Application Error', 1000, 'error', 'Application Crashing Events', 3, 'Faulting application name: {app}, version: {version}, faulting module name: {module}, exception code: 0xc0000005, fault offset: 0x{hex}.'),
      T('Application Hang', 1002, 'error', 'Application Hang', 1, 'The program {app} version {version} stopped interacting with Windows and was closed.'),
      T('Windows Error Reporting', 1001, 'information', 'None', 4, 'Fault bucket {hex}, type 5. Event Name: APPCRASH. Response: Not available. P1: {app}'),
      T('MsiInstaller', 11707, 'information', 'None', 2, 'Product: {product} -- Installation completed successfully.', 'person'),
      T('MsiInstaller', 1033, 'information', 'None', 2, 'Windows Installer installed the product. Product Name: {product}. Product Version: {version}. Installation success or error status: 0.', 'person'),
      T('Microsoft-Windows-Security-SPP', 16384, 'information', 'None', 8, 'Successfully scheduled Software Protection service for re-start at {time}. Reason: RulesEngine.'),
      T('Microsoft-Windows-Security-SPP', 8198, 'error', 'None', 1, 'License Activation (slui.exe) failed with the following error code: hr=0x8007232B'),
      T('ESENT', 916, 'information', 'General', 3, 'svchost ({pid},G,98) The beta feature EseDiskFlushConsistency is enabled in ESENT due to the beta site mode settings 0x800000.'),
      T('VSS', 8224, 'information', 'None', 4, 'The VSS service is shutting down due to idle timeout.'),
      T('gupdate', 0, 'information', 'None', 2, 'The Google Update service was started.'),
      T('.NET Runtime', 1026, 'error', 'None', 1, 'Application: {app}. Framework Version: v4.0.30319. Description: The process was terminated due to an unhandled exception. Exception Info: System.IO.IOException'),
      T('Outlook', 63, 'warning', 'None', 2, 'The Exchange web service request GetAppManifests succeeded.'),
      T('Microsoft Office 16', 2011, 'warning', 'None', 1, 'Office Subsystem: {app} was unable to open the file {file}.', 'person'),
      T('Winlogon', 6003, 'information', 'None', 2, 'The winlogon notification subscriber <SessionEnv> was unavailable to handle a critical notification event.'),
      T('SecurityCenter', 15, 'information', 'None', 3, 'Updated Windows Defender status successfully to SECURITY_PRODUCT_STATE_ON.'),
      T('Desktop Window Manager', 9027, 'information', 'None', 2, 'The Desktop Window Manager has registered the session port.'),
      T('Perflib', 1008, 'verbose', 'None', 2, 'The Open Procedure for service "BITS" in DLL "C:\\Windows\\System32\\bitsperf.dll" failed with error code The system cannot find the file specified.'),
      T('Application Error', 1005, 'critical', 'Application Crashing Events', 0.2, 'Windows cannot access the file {file} for one of the following reasons: network, disk or permissions. The program {app} has been closed.'),
    ],
  },
  {
    name: 'System', displayName: 'System', entryCount: 4100, maxSize: 20_971_520, retentionDays: 0, firstRecordId: 112_904,
    templates: [
      T('Service Control Manager', 7036, 'information', 'None', 12, 'The {service} service entered the {state} state.'),
      T('Service Control Manager', 7040, 'information', 'None', 3, 'The start type of the {service} service was changed from demand start to auto start.', 'system'),
      T('Service Control Manager', 7000, 'error', 'None', 1, 'The {service} service failed to start due to the following error: The system cannot find the file specified.'),
      T('Service Control Manager', 7031, 'error', 'None', 0.5, 'The {service} service terminated unexpectedly. It has done this 1 time(s). The following corrective action will be taken in 60000 milliseconds: Restart the service.'),
      T('Microsoft-Windows-Kernel-General', 12, 'information', '(1)', 1, 'The operating system started at system time {time}.', 'system'),
      T('Microsoft-Windows-Kernel-General', 13, 'information', '(1)', 1, 'The operating system is shutting down at system time {time}.', 'system'),
      T('Microsoft-Windows-Kernel-Power', 41, 'critical', '(63)', 0.3, 'The system has rebooted without cleanly shutting down first. This error could be caused if the system stopped responding, crashed, or lost power unexpectedly.', 'system'),
      T('Microsoft-Windows-Kernel-Power', 42, 'information', '(64)', 2, 'The system is entering sleep. Sleep Reason: Application API', 'system'),
      T('Microsoft-Windows-Power-Troubleshooter', 1, 'information', 'None', 2, 'The system has returned from a low power state. Sleep Time: {time}.'),
      T('Microsoft-Windows-WindowsUpdateClient', 19, 'information', 'Windows Update Agent', 3, 'Installation Successful: Windows successfully installed the following update: {kb}', 'system'),
      T('Microsoft-Windows-WindowsUpdateClient', 20, 'error', 'Windows Update Agent', 0.7, 'Installation Failure: Windows failed to install the following update with error 0x80070643: {kb}', 'system'),
      T('Microsoft-Windows-DistributedCOM', 10016, 'warning', 'None', 4, 'The application-specific permission settings do not grant Local Activation permission for the COM Server application with CLSID {guid} to the user NT AUTHORITY\\LOCAL SERVICE.', 'system'),
      T('Microsoft-Windows-Time-Service', 35, 'information', 'None', 2, 'The time service is now synchronizing the system time with the time source time.windows.com,0x9.', 'system'),
      T('Microsoft-Windows-Time-Service', 129, 'warning', 'None', 0.7, 'NtpClient was unable to set a domain peer to use as a time source because of discovery error.', 'system'),
      T('disk', 153, 'warning', 'None', 0.5, 'The IO operation at logical block address 0x{hex} for Disk 0 (PDO name: \\Device\\0000002a) was retried.'),
      T('Ntfs', 98, 'information', '(4)', 1, 'Volume C: (\\Device\\HarddiskVolume3) is healthy. No action is needed.', 'system'),
      T('e1iexpress', 27, 'warning', 'None', 1, 'Intel(R) Ethernet Connection I219-LM Network link is disconnected.'),
      T('Microsoft-Windows-DNS-Client', 1014, 'warning', '(1014)', 2, 'Name resolution for the name {host} timed out after none of the configured DNS servers responded.', 'system'),
      T('Microsoft-Windows-Kernel-Processor-Power', 55, 'verbose', '(47)', 1, 'Processor {pid} in group 0 exposes the following power management capabilities: Idle state type: ACPI Idle (C) States (2 state(s)).', 'system'),
    ],
  },
  {
    name: 'Security', displayName: 'Security', entryCount: 4800, maxSize: 20_971_520, retentionDays: 90, firstRecordId: 1_380_552,
    templates: [
      T('Microsoft-Windows-Security-Auditing', 4624, 'information', 'Logon', 14, 'An account was successfully logged on. Account Name: {account}. Logon Type: {logonType}. Source Network Address: {ip}.', 'person'),
      T('Microsoft-Windows-Security-Auditing', 4625, 'warning', 'Logon', 2, 'An account failed to log on. Account Name: {account}. Failure Reason: Unknown user name or bad password. Source Network Address: {ip}.', 'person'),
      T('Microsoft-Windows-Security-Auditing', 4634, 'information', 'Logoff', 8, 'An account was logged off. Account Name: {account}. Logon Type: {logonType}.', 'person'),
      T('Microsoft-Windows-Security-Auditing', 4672, 'information', 'Special Logon', 6, 'Special privileges assigned to new logon. Account Name: {account}. Privileges: SeSecurityPrivilege, SeBackupPrivilege, SeDebugPrivilege.', 'system'),
      T('Microsoft-Windows-Security-Auditing', 4688, 'information', 'Process Creation', 7, 'A new process has been created. New Process Name: {process}. Creator Process ID: 0x{hex}.', 'person'),
      T('Microsoft-Windows-Security-Auditing', 4720, 'information', 'User Account Management', 0.3, 'A user account was created. New Account: {account}.', 'person'),
      T('Microsoft-Windows-Security-Auditing', 4740, 'warning', 'User Account Management', 0.3, 'A user account was locked out. Account That Was Locked Out: {account}. Caller Computer Name: {host}.', 'system'),
      T('Microsoft-Windows-Security-Auditing', 4798, 'information', 'User Account Management', 2, "A user's local group membership was enumerated. Account Name: {account}.", 'person'),
      T('Microsoft-Windows-Security-Auditing', 5379, 'information', 'User Account Management', 3, 'Credential Manager credentials were read. Subject: {account}.', 'person'),
      T('Microsoft-Windows-Security-Auditing', 4907, 'information', 'Audit Policy Change', 1, 'Auditing settings on object were changed. Object Name: {file}.', 'system'),
      T('Microsoft-Windows-Security-Auditing', 5061, 'information', 'System Integrity', 2, 'Cryptographic operation. Operation: Open Key. Key Name: {hex}.', 'system'),
      T('Microsoft-Windows-Eventlog', 1102, 'critical', 'Log clear', 0.05, 'The audit log was cleared. Subject: {account}.', 'person'),
      T('Microsoft-Windows-Security-Auditing', 4957, 'error', 'Other Policy Change Events', 0.5, 'Windows Firewall did not apply the following rule: Core Networking - Teredo (UDP-In). Error: The local port resolved to an empty set.', 'system'),
    ],
  },
  {
    name: 'Setup', displayName: 'Setup', entryCount: 2100, maxSize: 1_052_672, retentionDays: 0, firstRecordId: 901,
    templates: [
      T('Microsoft-Windows-Servicing', 1, 'information', '(1)', 6, 'Initiating changes for package {kb}. Current state is Absent. Target state is Installed. Client id: WindowsUpdateAgent.', 'system'),
      T('Microsoft-Windows-Servicing', 2, 'information', '(1)', 6, 'Package {kb} was successfully changed to the Installed state.', 'system'),
      T('Microsoft-Windows-Servicing', 3, 'error', '(1)', 0.6, 'Package {kb} failed to be changed to the Installed state. Status: 0x800f0922.', 'system'),
      T('Microsoft-Windows-Servicing', 4, 'information', '(1)', 2, 'A reboot is necessary before package {kb} can be changed to the Installed state.', 'system'),
      T('Microsoft-Windows-WUSA', 3, 'warning', 'None', 0.6, 'Windows update could not be installed because of error 2149842967 "" (Command line: "wusa.exe {kb}.msu /quiet").', 'person'),
      T('Microsoft-Windows-Setup', 1001, 'critical', 'None', 0.05, 'Setup failed to apply the migration data. Error: 0x80070005 (Access is denied).', 'system'),
      T('Microsoft-Windows-Servicing', 5, 'verbose', '(1)', 1, 'Selectable update {kb} was staged. Client id: DISM Package Manager Provider.', 'system'),
    ],
  },
];

const FILLERS: Record<string, string[]> = {
  app: ['OUTLOOK.EXE', 'chrome.exe', 'Teams.exe', 'EXCEL.EXE', 'AcroRd32.exe', 'explorer.exe', 'msedge.exe', 'Code.exe'],
  module: ['ntdll.dll', 'KERNELBASE.dll', 'ucrtbase.dll', 'mso20win32client.dll', 'clr.dll', 'unknown'],
  product: ['Microsoft Visual C++ 2022 X64 Minimum Runtime', 'Zoom', 'Google Chrome', '7-Zip 23.01 (x64)', 'Adobe Acrobat Reader'],
  file: ['C:\\Users\\Public\\Documents\\Budget.xlsx', '\\\\fs01\\share\\report.docx', 'C:\\Windows\\System32\\drivers\\etc\\hosts', 'C:\\ProgramData\\Agent\\config.json'],
  service: ['Windows Update', 'Background Intelligent Transfer Service', 'Print Spooler', 'WinHTTP Web Proxy Auto-Discovery Service', 'Windows Modules Installer', 'Microsoft Defender Antivirus Service', 'Device Management Agent'],
  state: ['running', 'stopped'],
  kb: ['KB5034441', 'KB5035845', 'KB5036893', 'KB5037771', 'KB5039212', 'KB890830'],
  account: ['alice', 'bob', 'carol', 'dave', 'svc-backup', 'Administrator', 'eve'],
  logonType: ['2', '3', '5', '7', '10', '11'],
  process: ['C:\\Windows\\System32\\svchost.exe', 'C:\\Windows\\System32\\cmd.exe', 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe', 'C:\\Program Files\\Microsoft Office\\root\\Office16\\OUTLOOK.EXE', 'C:\\Windows\\System32\\taskhostw.exe'],
  host: ['dc01.contoso.local', 'fs01.contoso.local', 'wpad', 'login.microsoftonline.com', 'WS-0042'],
  ip: ['10.0.4.17', '10.0.4.23', '192.168.1.50', '127.0.0.1', '-', '203.0.113.9'],
};

const LEVEL_CODES: Record<LiveLevel, number> = { critical: 1, error: 2, warning: 3, information: 4, verbose: 5 };

const xmlEscape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Every sample log, generated from the options. */
export function generateSampleEventLogs(options: SampleOptions = {}): SampleEventLog[] {
  const seed = options.seed ?? 1;
  const hostname = options.hostname ?? 'SAMPLE-HOST';
  const now = options.now ?? Date.now();
  const spanMs = (options.spanDays ?? 30) * 86_400_000;
  // One independent stream per log, so adding a log never changes the others.
  return LOGS.map((spec, index) => generateLog(spec, seededRandom(seed * 1_000_003 + index * 7919), hostname, now, spanMs));
}

function generateLog(spec: LogSpec, random: () => number, hostname: string, now: number, spanMs: number): SampleEventLog {
  const pick = <V>(items: readonly V[]): V => items[Math.floor(random() * items.length)]!;
  const totalWeight = spec.templates.reduce((sum, t) => sum + t.weight, 0);
  const pickTemplate = (): Template => {
    let roll = random() * totalWeight;
    for (const template of spec.templates) {
      roll -= template.weight;
      if (roll < 0) return template;
    }
    return spec.templates[spec.templates.length - 1]!;
  };
  const fill = (message: string, at: number) =>
    message.replace(/\{(\w+)\}/g, (_, key: string) => {
      if (key === 'version') return `${1 + Math.floor(random() * 20)}.${Math.floor(random() * 10)}.${Math.floor(random() * 9000)}.0`;
      if (key === 'hex') return Math.floor(random() * 0xffffffff).toString(16).padStart(8, '0');
      if (key === 'guid') {
        const hex = () => Math.floor(random() * 0x10000).toString(16).toUpperCase().padStart(4, '0');
        return `{${hex()}${hex()}-${hex()}-${hex()}-${hex()}-${hex()}${hex()}${hex()}}`;
      }
      if (key === 'pid') return String(Math.floor(random() * 16));
      if (key === 'time') return new Date(at).toISOString();
      return pick(FILLERS[key] ?? [key]);
    });

  // Uniform times over the span, sorted, so recordId and timeCreated ascend together.
  const times = Array.from({ length: spec.entryCount }, () => now - Math.floor(random() * spanMs)).sort((a, b) => a - b);
  const entries = times.map((at, i): LiveEventLogEntry => {
    const template = pickTemplate();
    const recordId = spec.firstRecordId + i;
    const message = fill(template.message, at);
    const user = template.user === 'system' ? 'NT AUTHORITY\\SYSTEM' : template.user === 'person' ? `CONTOSO\\${pick(FILLERS.account!)}` : null;
    const timeCreated = new Date(at).toISOString();
    const rawXml =
      `<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System>` +
      `<Provider Name="${xmlEscape(template.source)}"/><EventID>${template.eventId}</EventID>` +
      `<Level>${LEVEL_CODES[template.level]}</Level><Task>0</Task><Keywords>0x80000000000000</Keywords>` +
      `<TimeCreated SystemTime="${timeCreated}"/><EventRecordID>${recordId}</EventRecordID>` +
      `<Channel>${xmlEscape(spec.name)}</Channel><Computer>${xmlEscape(hostname)}</Computer>` +
      (user ? `<Security UserID="${xmlEscape(user)}"/>` : '<Security/>') +
      `</System><EventData><Data>${xmlEscape(message)}</Data></EventData></Event>`;
    return { recordId, timeCreated, level: template.level, source: template.source, eventId: template.eventId, message, category: template.category, user, computer: hostname, rawXml };
  });
  return {
    descriptor: {
      name: spec.name,
      displayName: spec.displayName,
      recordCount: entries.length,
      maxSize: spec.maxSize,
      retentionDays: spec.retentionDays,
      lastWriteTime: entries[entries.length - 1]!.timeCreated,
    },
    entries,
  };
}
