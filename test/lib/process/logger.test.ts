// The structured logger (lib/process/logger.ts): one JSON object a line with the service's name and
// an ISO time, below its level nothing. What stdout does when nobody reads it:
// test/e2e/stop.test.ts.
import { capturingLogger } from '../../helpers/log';

it('writes JSON lines with the service, an ISO time, the level and the fields; nothing below its level', () => {
  const { log, lines } = capturingLogger('warn');
  log.info({ queue: 'sortation' }, 'not shown');
  log.warn({ queue: 'sortation', messageId: 7 }, 'shown');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 40, service: 'sorter-integration', queue: 'sortation', messageId: 7, msg: 'shown' });
  expect(lines[0]?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const silent = capturingLogger('silent');
  silent.log.error('nothing at all');
  expect(silent.lines).toEqual([]);
});
