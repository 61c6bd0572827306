// A crowd of minimal agents for the live-query bench, in their own process: connects every agent
// listed in AGENTS_FILE to SERVER_WS, answers each command with a fixed small result, and prints
// "ready <n>" once all are connected. Stops on SIGTERM.
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';

const agents = JSON.parse(readFileSync(process.env.AGENTS_FILE!, 'utf8')) as { agentId: string; token: string }[];
const server = process.env.SERVER_WS!;
const descriptor = { name: 'System', displayName: 'System', recordCount: 1, maxSize: 1_048_576, retentionDays: 30, lastWriteTime: '2026-11-01T00:00:00.000Z' };
const sockets: WebSocket[] = [];

function connect(agent: { agentId: string; token: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${server}/api/v1/agents/${agent.agentId}/ws`, { headers: { authorization: `Bearer ${agent.token}` }, perMessageDeflate: false });
    socket.on('message', (data) => {
      const command = JSON.parse(String(data)) as { id: string };
      socket.send(JSON.stringify({ type: 'command_result', id: command.id, status: 'completed', result: { logs: [descriptor] } }));
    });
    socket.once('open', () => resolve());
    socket.once('error', reject);
    sockets.push(socket);
  });
}

for (let i = 0; i < agents.length; i += 200) await Promise.all(agents.slice(i, i + 200).map(connect));
process.stdout.write(`ready ${agents.length}\n`);
process.on('SIGTERM', () => {
  for (const socket of sockets) socket.terminate();
  process.exit(0);
});
