/*
 * Slow-disk mode and sync counter for the benchmark and the tests (docs/performance.md, "Slow
 * storage" and "What it writes to the disk"). Loaded with LD_PRELOAD into the service process, it
 * delays every fsync() and fdatasync() (the calls SQLite makes to commit, and Node's fs.fsync) by
 * SORTER_FSYNC_DELAY_MS milliseconds (a decimal), to stand for the storage of an edge box: SD
 * cards, eMMC, consumer SSDs without power-loss protection. With SORTER_FSYNC_COUNT_FILE (a file
 * of 16 zero bytes, on tmpfs so that counting writes nothing to a disk) it also counts them there:
 * two little-endian 64-bit counters, fsync then fdatasync, in shared memory that the benchmark
 * reads while the process runs. Linux only; built by bench/slow-disk.ts with the system C
 * compiler. The delay is a sleep in the calling thread, as a slow device's flush is.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static long delay_ns = 0;
static long long *counts = NULL;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
  const char *ms = getenv("SORTER_FSYNC_DELAY_MS");
  if (ms) delay_ns = (long)(atof(ms) * 1e6);
  const char *file = getenv("SORTER_FSYNC_COUNT_FILE");
  if (file) {
    int fd = open(file, O_RDWR);
    if (fd >= 0) {
      void *p = mmap(NULL, 2 * sizeof(long long), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) counts = (long long *)p;
      close(fd);
    }
  }
}

static void slow_down(int which) {
  pthread_once(&once, init);
  if (counts) __atomic_fetch_add(&counts[which], 1, __ATOMIC_RELAXED);
  if (delay_ns > 0) {
    struct timespec ts = { delay_ns / 1000000000L, delay_ns % 1000000000L };
    while (nanosleep(&ts, &ts) != 0) {}
  }
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  slow_down(0);
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  slow_down(1);
  return real(fd);
}
