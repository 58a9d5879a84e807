/*
 * Slow-disk mode for the benchmark and the tests (docs/performance.md, "Slow storage").
 * Loaded with LD_PRELOAD into the service process, it delays every fsync() and fdatasync()
 * (the calls SQLite makes to commit, and Node's fs.fsync) by SORTER_FSYNC_DELAY_MS
 * milliseconds (a decimal), to stand for the storage of an edge box: SD cards, eMMC, consumer
 * SSDs without power-loss protection. Linux only; built by bench/slow-disk.ts with the
 * system C compiler. The delay is a sleep in the calling thread, as a slow device's flush is.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static long delay_ns = -1;

static void slow_down(void) {
  if (delay_ns < 0) {
    const char *ms = getenv("SORTER_FSYNC_DELAY_MS");
    delay_ns = ms ? (long)(atof(ms) * 1e6) : 0;
  }
  if (delay_ns > 0) {
    struct timespec ts = { delay_ns / 1000000000L, delay_ns % 1000000000L };
    while (nanosleep(&ts, &ts) != 0) {}
  }
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  slow_down();
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  slow_down();
  return real(fd);
}
