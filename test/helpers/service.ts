// Test helper: an in-process service with its hapi server, on a fresh home and database.
import type { Server } from '@hapi/hapi';
import { type Config, validateConfig } from '../../lib/process/config';
import { createLogger } from '../../lib/process/logger';
import type { SorterMessage } from '../../model/messages';
import { createServer } from '../../lib/http/server';
import { type Service, createService } from '../../lib/service';
import { removeHome, tempHome } from './home';
import { until } from './until';

/** An in-process service on a real SQLite file in a temporary home, with its unstarted hapi server. */
export interface TestService {
  home: string;
  config: Config;
  service: Service;
  server: Server;
  /** Commit messages as the sorter link would (through the writer thread) and wake waiting clients. */
  publish(messages: SorterMessage[]): Promise<number[]>;
  /** Resolves once every message handed out has been committed or released. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** Build a service from config overrides and home files; the database is a fresh file. */
export async function testService(
  config: Partial<Config> | object = {},
  files: Record<string, string | object> = {},
  clock?: () => Date,
  /** What the sorter link times by (ServiceOptions.steadyMs). */
  steadyMs?: () => number,
): Promise<TestService> {
  const home = tempHome(files);
  const validated = validateConfig({ LogLevel: 'silent', ...config });
  const service = await createService({ home, config: validated, log: createLogger('silent'), version: '0.0.0-test', clock, steadyMs });
  const server = await createServer(service);
  // As lib/main.ts: the link once the server exists (this helper's server is not started).
  service.startLink();
  return {
    home,
    config: validated,
    service,
    server,
    publish: (messages) => publish(service, messages),
    async settled() {
      const { sortation, destination } = service.deps.dispatchers;
      await until(() => sortation.inFlight + destination.inFlight === 0, 2000, 'every claim committed or released', 5);
    },
    async close() {
      service.drain();
      await server.stop({ timeout: 1000 });
      await service.close();
      removeHome(home);
    },
  };
}

/** Commit messages as the sorter link would (through the writer thread) and wake waiting clients. */
export async function publish(service: Service, messages: SorterMessage[]): Promise<number[]> {
  const ids = await service.writer.run('enqueue', [messages, new Date().toISOString()]);
  service.deps.dispatchers.sortation.notify();
  service.deps.dispatchers.destination.notify();
  return ids;
}
