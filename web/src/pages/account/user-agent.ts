// A session's User-Agent header in plain words: "Firefox on Windows", "Safari on iPhone", or for a
// script the program's name ("curl (not a browser)"). Coarse on purpose: enough to recognise a device.

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\b(OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(Firefox|FxiOS)\//, 'Firefox'],
  [/\b(Chrome|CriOS|Chromium|HeadlessChrome)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];

const SYSTEMS: [RegExp, string][] = [
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid\b/, 'Android'],
  [/\bWindows\b/, 'Windows'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

/** A plain name for the browser and system of a User-Agent header. */
export function describeUserAgent(userAgent: string | null): string {
  const ua = userAgent?.trim() ?? '';
  if (!ua) return 'Unknown device';
  const browser = BROWSERS.find(([pattern]) => pattern.test(ua))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(ua))?.[1];
  if (browser) return system ? `${browser} on ${system}` : browser;
  // Not a browser: a script or tool names itself first ("curl/8.5.0", "node", "python-requests/2.31").
  const program = /^[A-Za-z][\w.-]*/.exec(ua)?.[0] ?? 'Unknown program';
  return `${program} (not a browser)`;
}
