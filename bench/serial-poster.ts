// The ceiling of any in-order webhook sender on this machine (event-delivery bench): a process
// that posts a webhook-sized body one request at a time on one keep-alive connection, as the
// sender does, with nothing else to do (no database, no signing), until it is stopped. The bench
// counts what its receiver answers. Usage: serial-poster.ts <url>
import http from 'node:http';

const url = process.argv[2]!;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const body = JSON.stringify({ type: 'device.update', timestamp: new Date().toISOString(), data: { padding: 'x'.repeat(700) } });

function post(): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      response.resume();
      response.on('end', resolve);
    });
    request.on('error', reject);
    request.end(body);
  });
}

process.on('SIGTERM', () => process.exit(0));
for (;;) await post();
