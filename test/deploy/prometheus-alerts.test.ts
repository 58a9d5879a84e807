// deploy/prometheus/alerts.yml: the alert rules are valid (promtool check rules), each fires on the
// series of its fault and none on a healthy service's (promtool test rules alerts.test.yml), and
// they cover the service's alarms.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ALARM_RULES } from '../../lib/ops/alarm-rules';
import { itWhen, missingCommands } from '../helpers/tools';

const DIR = path.join(__dirname, '../../deploy/prometheus');
const noPromtool = missingCommands({ promtool: "apt-get install prometheus (Debian's package has promtool)" });
const promtool = (...args: string[]) => spawnSync('promtool', args, { cwd: DIR, encoding: 'utf8' });

describe('the Prometheus alert rules', () => {
  itWhen(noPromtool, 'promtool')('pass promtool check rules', () => {
    const r = promtool('check', 'rules', 'alerts.yml');
    expect({ status: r.status, out: r.stdout + r.stderr }).toEqual({ status: 0, out: expect.stringContaining('SUCCESS: 14 rules found') });
  });

  itWhen(noPromtool, 'promtool')('pass their unit tests: each fires on its fault, none on a healthy service', () => {
    const r = promtool('test', 'rules', 'alerts.test.yml');
    expect({ status: r.status, out: r.stdout + r.stderr }).toEqual({ status: 0, out: expect.stringContaining('SUCCESS') });
  });

  it("carry a code for each of the service's alarms (a queue's two alarms share one rule with a queue label)", () => {
    const text = fs.readFileSync(path.join(DIR, 'alerts.yml'), 'utf8');
    const codes = new Set([...text.matchAll(/code: ([A-Z_]+)/g)].map((m) => m[1]));
    for (const rule of ALARM_RULES)
      expect([rule.code, codes.has(rule.code.replace(/_(SORTATION|DESTINATION)$/, ''))]).toEqual([rule.code, true]);
  });
});
