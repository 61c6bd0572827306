// The agent gateway (DESIGN.md §6): one socket per agent, commands with fresh ids, each waiting for
// its matching command_result. Offline, agent failure, unparseable replies and timeouts map to the
// API.md §2 errors; a timeout is never an empty success. Late replies find no pending command and
// are dropped. A socket that closes fails its pending commands at once. With Redis, a command for
// a device connected to another instance is relayed there (relay.ts), and so is the closing of a
// decommissioned device's socket, or of a deleted organization's agents' sockets.
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { AppError, agentTimeout } from '../errors.js';
import type { CommandMessage, CommandPayload, CommandResultMessage } from './protocol.js';
import { checkResult } from './results.js';
import type { DisconnectTarget, Relay } from './relay.js';

export interface ConnectedAgent {
  deviceId: string;
  agentId: string;
  orgId: string;
}

interface Pending {
  command: CommandPayload['command'];
  resolve(result: unknown): void;
  reject(err: AppError): void;
  timer: NodeJS.Timeout;
}

interface Connection {
  agent: ConnectedAgent;
  socket: WebSocket;
  pending: Map<string, Pending>;
  alive: boolean;
}

export interface AgentGateway {
  /** Takes over an authenticated socket; an older socket of the same device is closed. */
  attach(agent: ConnectedAgent, socket: WebSocket): void;
  /** Sends a command to the device, here or through the relay, and returns the checked result. */
  execute(deviceId: string, command: CommandPayload): Promise<unknown>;
  /** Closes the device's socket (4001), here or on the instance holding it: for a decommissioned device. Never rejects. */
  disconnect(deviceId: string): Promise<void>;
  /** Closes the sockets of the organization's agents (4001) on every instance: for a deleted organization. Never rejects. */
  disconnectOrganization(orgId: string): Promise<void>;
  connectedCount(): number;
  close(): Promise<void>;
}

const PING_INTERVAL_MS = 30_000;
/** The agent's credential no longer works: its device was decommissioned or its organization deleted. */
const CREDENTIAL_VOID_CLOSE_CODE = 4001;

export function createAgentGateway(deps: {
  timeoutMs: number;
  relay: Relay;
  /** Called while a socket is open (on connect and each pong), to keep the device online. */
  onSeen: (deviceId: string) => void;
  log: (level: 'info' | 'warn', message: string) => void;
}): AgentGateway {
  const connections = new Map<string, Connection>();

  // Protocol-level keep-alive: a socket that missed a whole ping interval is dead.
  const pinger = setInterval(() => {
    for (const connection of connections.values()) {
      if (!connection.alive) {
        connection.socket.terminate();
        continue;
      }
      connection.alive = false;
      connection.socket.ping();
    }
  }, PING_INTERVAL_MS).unref();

  function detach(connection: Connection, reason: string) {
    if (connections.get(connection.agent.deviceId) === connection) {
      connections.delete(connection.agent.deviceId);
      deps.relay.withdraw(connection.agent.deviceId);
    }
    failPending(connection, new AppError('DEVICE_OFFLINE', `The device disconnected before answering (${reason})`));
  }

  function failPending(connection: Connection, error: AppError) {
    for (const [id, pending] of connection.pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
      connection.pending.delete(id);
    }
  }

  function onMessage(connection: Connection, data: Buffer, isBinary: boolean) {
    let message: CommandResultMessage;
    try {
      if (isBinary) throw new Error('binary frame');
      message = JSON.parse(data.toString('utf8')) as CommandResultMessage;
      if (typeof message !== 'object' || message === null || message.type !== 'command_result' || typeof message.id !== 'string') throw new Error('not a command_result');
    } catch (err) {
      deps.log('warn', `agent ${connection.agent.agentId} sent a malformed message (${(err as Error).message}); closing its socket`);
      // Whatever it was meant to answer cannot be told: every query waiting on this agent gets the
      // bad reply it sent (502), not "offline" when the socket then closes.
      failPending(connection, new AppError('AGENT_BAD_REPLY', 'The agent’s reply could not be read'));
      connection.socket.close(1008, 'malformed message');
      return;
    }
    const pending = connection.pending.get(message.id);
    if (!pending) return; // late (timed out) or unknown: dropped, never delivered elsewhere
    connection.pending.delete(message.id);
    clearTimeout(pending.timer);
    if (message.status === 'failed') {
      if (message.error === 'not_found') pending.reject(new AppError('NOT_FOUND', 'The device has no such event log or record'));
      else pending.reject(new AppError('AGENT_ERROR', `The agent could not run the query: ${String(message.error ?? 'no reason given').slice(0, 500)}`));
      return;
    }
    if (message.status !== 'completed' || !checkResult(pending.command, message.result)) {
      pending.reject(new AppError('AGENT_BAD_REPLY', 'The agent’s reply was not in the expected format'));
      return;
    }
    pending.resolve(message.result);
  }

  function runLocal(connection: Connection, command: CommandPayload): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const id = randomUUID();
      const timer = setTimeout(() => {
        connection.pending.delete(id);
        reject(agentTimeout(deps.timeoutMs));
      }, deps.timeoutMs);
      connection.pending.set(id, { command: command.command, resolve, reject, timer });
      const message: CommandMessage = { type: 'command', id, ...command } as CommandMessage;
      connection.socket.send(JSON.stringify(message), (err) => {
        if (!err) return;
        clearTimeout(timer);
        connection.pending.delete(id);
        reject(new AppError('DEVICE_OFFLINE', 'The device’s connection failed while sending the query'));
      });
    });
  }

  async function execute(deviceId: string, command: CommandPayload): Promise<unknown> {
    const local = connections.get(deviceId);
    if (local) return runLocal(local, command);
    return deps.relay.forward(deviceId, command, deps.timeoutMs);
  }

  function closeVoid(connection: Connection, reason: string) {
    connection.socket.close(CREDENTIAL_VOID_CLOSE_CODE, reason);
    detach(connection, reason);
  }

  /** Closes the target's sockets this instance holds; true when it held one. */
  function disconnectLocal(target: DisconnectTarget): boolean {
    if ('deviceId' in target) {
      const local = connections.get(target.deviceId);
      if (!local) return false;
      closeVoid(local, 'device decommissioned');
      return true;
    }
    let held = false;
    for (const connection of [...connections.values()]) {
      if (connection.agent.orgId !== target.orgId) continue;
      closeVoid(connection, 'organization deleted');
      held = true;
    }
    return held;
  }

  // Commands and disconnects relayed from other instances run here like local ones.
  deps.relay.serveDisconnect(disconnectLocal);
  deps.relay.serve(async (deviceId, command) => {
    const local = connections.get(deviceId);
    if (!local) throw new AppError('DEVICE_OFFLINE', 'The device is not connected');
    return runLocal(local, command);
  });

  return {
    attach(agent, socket) {
      const previous = connections.get(agent.deviceId);
      if (previous) {
        previous.socket.close(4000, 'replaced by a newer connection');
        detach(previous, 'replaced');
      }
      const connection: Connection = { agent, socket, pending: new Map(), alive: true };
      connections.set(agent.deviceId, connection);
      deps.relay.announce(agent.deviceId);
      deps.onSeen(agent.deviceId);
      socket.on('message', (data: Buffer, isBinary: boolean) => onMessage(connection, data, isBinary));
      socket.on('pong', () => {
        connection.alive = true;
        deps.onSeen(agent.deviceId);
      });
      socket.on('close', () => detach(connection, 'closed'));
      socket.on('error', (err) => deps.log('warn', `agent ${agent.agentId} socket error: ${err.message}`));
    },
    execute,
    async disconnect(deviceId) {
      if (!disconnectLocal({ deviceId })) await deps.relay.disconnect(deviceId);
    },
    async disconnectOrganization(orgId) {
      disconnectLocal({ orgId });
      await deps.relay.disconnectOrganization(orgId);
    },
    connectedCount: () => connections.size,
    async close() {
      clearInterval(pinger);
      for (const connection of [...connections.values()]) {
        connection.socket.close(1001, 'server shutting down');
        detach(connection, 'server shutting down');
      }
      await deps.relay.close();
    },
  };
}

