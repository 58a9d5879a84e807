// config.json: defaults, validation errors listed together, paths.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, configAdvice, databaseFile, loadConfig, resolveHome, validateConfig } from '../../../lib/process/config';
import { removeHome, tempHome } from '../../helpers/home';

describe('config', () => {
  it('uses every default when config.json is missing', () => {
    const home = tempHome();
    const config = loadConfig(home);
    expect(config.TestMode).toBe(false);
    expect(config.Port).toBe(8081);
    expect(config.DefaultTimeOut).toBe(0);
    expect(config.Synchronous).toBe('FULL');
    expect(config.ApiKeys).toEqual([]);
    expect(config.Sorter).toMatchObject({
      Host: '127.0.0.1',
      Port: 2000,
      Name: 'WCS01',
      PeerName: 'PLC01',
      HeartbeatMs: 2000,
      AckTimeoutMs: 1000,
      AssignmentTtlSeconds: 30,
    });
    removeHome(home);
  });

  it('reads TestMode and Port with the spec spelling', () => {
    const home = tempHome({ 'config.json': { TestMode: true, Port: 9090 } });
    expect(loadConfig(home)).toMatchObject({ TestMode: true, Port: 9090 });
    removeHome(home);
  });

  it('lists every problem in one message', () => {
    let error: ConfigError | undefined;
    try {
      validateConfig({ Prot: 1, Port: 'x', TestMode: 'yes', Sorter: { Port: 99999 } });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toHaveLength(4);
    expect(error!.message).toMatch(/"Prot" is not allowed/);
    expect(error!.message).toMatch(/"Port" must be a number/);
    expect(error!.message).toMatch(/"TestMode" must be a boolean/);
    expect(error!.message).toMatch(/"Sorter.Port" must be a valid port/);
  });

  it('refuses a key given twice (JSON would keep the last: a second TestMode could mean live mode)', () => {
    const home = tempHome({ 'config.json': '{ "TestMode": true, "Port": 9090, "TestMode": false, "Sorter": { "Port": 1, "Port": 2 } }' });
    expect(() => loadConfig(home)).toThrow(
      /config\.json is invalid:\n {2}- "TestMode" is given more than once: give it once\n {2}- "Sorter\.Port" is given more than once/,
    );
    removeHome(home);
  });

  it('reports malformed JSON with the file name', () => {
    const home = tempHome({ 'config.json': '{ "TestMode": tru' });
    expect(() => loadConfig(home)).toThrow(/config\.json is invalid:\n {2}- is not valid JSON/);
    removeHome(home);
  });

  it('reads a file saved with a UTF-8 byte-order mark', () => {
    const home = tempHome({ 'config.json': '\uFEFF{"TestMode": true, "Port": 9000}' });
    expect(loadConfig(home)).toMatchObject({ TestMode: true, Port: 9000 });
    removeHome(home);
  });

  it('refuses a TestDatabase that resolves to the live Database', () => {
    const home = tempHome({ 'config.json': { TestMode: true, Database: 'data/q.db', TestDatabase: './data/../data/q.db' } });
    expect(() => loadConfig(home)).toThrow(/"TestDatabase" must not be the live "Database"/);
    removeHome(home);
  });

  it('takes the home from SORTER_HOME, else the fallback', () => {
    expect(resolveHome({ SORTER_HOME: '/tmp/x' }, '/srv')).toBe('/tmp/x');
    expect(resolveHome({}, '/srv')).toBe('/srv');
    expect(resolveHome({ SORTER_HOME: '' }, '/srv')).toBe('/srv');
  });

  it('gives test mode its own database file', () => {
    const live = validateConfig({});
    const test = validateConfig({ TestMode: true });
    expect(databaseFile('/h', live)).toBe(path.resolve('/h/data/sorter.db'));
    expect(databaseFile('/h', test)).toBe(path.resolve('/h/data/sorter-test.db'));
  });

  it('documents every key in the settings table of docs/configuration.md', () => {
    const doc = fs.readFileSync(path.join(__dirname, '../../../docs/configuration.md'), 'utf8');
    const config = validateConfig({});
    // A row of the table each (its first cell), not only a mention somewhere in the text.
    const documented = doc
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((row) => row.split('|')[1]?.trim());
    for (const key of Object.keys(config)) expect(documented).toContain(`\`${key}\``);
    for (const key of Object.keys(config.Sorter)) expect(documented).toContain(`\`Sorter.${key}\``);
    for (const key of Object.keys(config.Alarms)) expect(documented).toContain(`\`Alarms.${key}\``);
  });
});

describe('ApiKeys with roles, and the alarms', () => {
  it('takes plain keys and named keys with a role, side by side', () => {
    const config = validateConfig({ ApiKeys: ['old', { Name: 'shift-lead', Key: 'k2', Role: 'operator' }] });
    expect(config.ApiKeys).toEqual(['old', { Name: 'shift-lead', Key: 'k2', Role: 'operator' }]);
  });

  it('refuses an unknown role, a key without a name, and the same key or name twice, all at once', () => {
    const problems = () => {
      try {
        validateConfig({
          ApiKeys: [
            { Name: 'a', Key: 'k', Role: 'admin' },
            { Key: 'k3', Role: 'wcs' },
            'same',
            { Name: 'b', Key: 'same', Role: 'wcs' },
            { Name: 'b', Key: 'k5', Role: 'monitor' },
          ],
        });
      } catch (err) {
        return (err as ConfigError).problems.join('\n');
      }
      return '';
    };
    const text = problems();
    expect(text).toMatch(/"ApiKeys\[0\]\.Role" must be one of \[wcs, operator, monitor\]/);
    expect(text).toMatch(/"ApiKeys\[1\]\.Name" is required/);
    expect(text).toMatch(/same key or the same Name twice/);
  });

  it('has alarm thresholds for a sorter of 1 to 30 items/s by default, each may be switched off with 0', () => {
    expect(validateConfig({}).Alarms).toEqual({
      EvaluateSeconds: 2,
      LinkDownSeconds: 10,
      LinkDropsInTenMinutes: 3,
      SorterSilentSeconds: 300,
      WcsPollSeconds: 60,
      QueueAgeSeconds: 30,
      OutboxAgeSeconds: 10,
      StorageStalledSeconds: 5,
      MinFreeDiskBytes: 268435456,
      ClearAfterSeconds: 10,
    });
    expect(validateConfig({ Alarms: { LinkDownSeconds: 0 } }).Alarms.LinkDownSeconds).toBe(0);
    expect(validateConfig({ Alarms: { LinkDropsInTenMinutes: 0 } }).Alarms.LinkDropsInTenMinutes).toBe(0);
    expect(() => validateConfig({ Alarms: { LinkDropsInTenMinutes: 2.5 } })).toThrow(/"Alarms.LinkDropsInTenMinutes" must be an integer/);
    expect(() => validateConfig({ Alarms: { EvaluateSeconds: 30 } })).toThrow(/"Alarms.EvaluateSeconds" must be less than or equal to 5/);
  });
});

describe('start-up advice', () => {
  it('live mode without MaxRequestAgeSeconds: one line saying what to set; set, or in test mode: none', () => {
    const live = validateConfig({ TestMode: false });
    expect(configAdvice(live)).toEqual([
      expect.stringMatching(/^MaxRequestAgeSeconds is 0: .*set it to a second less than the sorter's decision window/),
    ]);
    expect(configAdvice(validateConfig({ TestMode: false, MaxRequestAgeSeconds: 1.5 }))).toEqual([]);
    expect(configAdvice(validateConfig({ TestMode: true }))).toEqual([]);
  });
});
