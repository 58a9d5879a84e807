// Which of V8's collectors the service runs with, said once at start: bin/sorter-integration chooses
// it from the CPU the process may use (docs/operations.md, "V8's collector") and says why in
// SORTER_COLLECTOR_WHY; the options Node was started with say which.

/** The collector Node's options give: on the allocating thread, with helper threads, or V8's default pool. */
export type Collector = 'single-threaded' | 'helpers' | 'default';

export function collectorOf(execArgv: readonly string[]): Collector {
  const flag = (name: string) => execArgv.some((a) => a.replace(/_/g, '-') === name || a.replace(/_/g, '-').startsWith(`${name}=`));
  if (flag('--single-threaded-gc')) return 'single-threaded';
  return flag('--v8-pool-size') ? 'helpers' : 'default';
}

/** The start-up log line: the collector, why (the launcher's reason), and Node's options. */
export function collectorLine(
  execArgv: readonly string[],
  env: NodeJS.ProcessEnv,
): { fields: { collector: Collector; why: string | null; nodeOptions: string[] }; message: string } {
  const collector = collectorOf(execArgv);
  const why = env.SORTER_COLLECTOR_WHY?.trim() || null;
  const options = execArgv.length > 0 ? execArgv.join(' ') : 'none';
  return {
    fields: { collector, why, nodeOptions: [...execArgv] },
    message: `V8's collector: ${collector} (${why ?? 'node started without bin/sorter-integration'}); node options: ${options}`,
  };
}
