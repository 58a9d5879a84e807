// `npm run trace -- <TrackID> [--json]`: what happened to an item, read from the service's
// database read-only (safe while the service runs). SORTER_HOME selects the service home.
import fs from 'node:fs';
import { openReader } from '../../db/connection';
import { ConfigError, databaseFile, loadConfig, resolveHome } from '../process/config';
import { projectRoot } from '../process/paths';
import { itemTrace } from '../../db/item-trace';
import { errorMessage } from '../process/errors';

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const [trackId] = argv.filter((a) => !a.startsWith('--'));
  if (!trackId) {
    process.stderr.write('usage: npm run trace -- <TrackID> [--json]   (SORTER_HOME: the service home)\n');
    return 2;
  }
  const home = resolveHome(process.env, projectRoot);
  let file: string;
  try {
    file = databaseFile(home, loadConfig(home));
  } catch (err) {
    process.stderr.write(`trace: ${err instanceof ConfigError ? err.message : errorMessage(err)}\n`);
    return 78;
  }
  if (!fs.existsSync(file)) {
    process.stderr.write(`trace: no database at ${file} (set SORTER_HOME to the service home)\n`);
    return 1;
  }
  const db = openReader(file);
  try {
    const timeline = await itemTrace(db)(trackId);
    if (!timeline) {
      process.stderr.write(`trace: nothing is known of item "${trackId}" in ${file}\n`);
      return 1;
    }
    if (json) process.stdout.write(`${JSON.stringify(timeline, null, 2)}\n`);
    else for (const e of timeline.Events) process.stdout.write(`${e.Time}  ${e.Event.padEnd(22)}  ${e.Text}\n`);
    return 0;
  } finally {
    db.close();
  }
}

void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
