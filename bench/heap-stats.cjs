// Preload for a look at V8's heaps thread by thread: `node --max-semi-space-size=2 -r
// ./bench/heap-stats.cjs dist/lib/main.js`. Worker threads inherit the preload, and V8's
// statistics are per isolate, so each thread (main, writer, checkpoint) appends its own after
// HEAP_STATS_AFTER_S seconds (default 30) to HEAP_STATS_FILE (default heap-stats.txt), in MB.
const fs = require('node:fs');
const v8 = require('node:v8');
const { threadId } = require('node:worker_threads');

const mb = (bytes) => (bytes / 1048576).toFixed(1);
setTimeout(
  () => {
    const h = v8.getHeapStatistics();
    const lines = [
      `thread ${threadId}: heap ${mb(h.total_heap_size)} MB, used ${mb(h.used_heap_size)}, physical ${mb(h.total_physical_size)}, malloced ${mb(h.malloced_memory)}`,
    ];
    for (const s of v8.getHeapSpaceStatistics())
      if (s.space_size > 0)
        lines.push(`  ${s.space_name}: ${mb(s.space_size)} MB, used ${mb(s.space_used_size)}, physical ${mb(s.physical_space_size)}`);
    fs.appendFileSync(process.env.HEAP_STATS_FILE || 'heap-stats.txt', lines.join('\n') + '\n');
  },
  Number(process.env.HEAP_STATS_AFTER_S || 30) * 1000,
).unref();
