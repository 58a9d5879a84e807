/*
 * Slow-disk mode and sync counter for the benchmark and the tests (docs/performance.md, "Slow
 * storage" and "What it writes to the disk"). Loaded with LD_PRELOAD into the service process, it
 * delays every fsync() and fdatasync() (the calls SQLite makes to commit, and Node's fs.fsync) by
 * SORTER_FSYNC_DELAY_MS milliseconds (a decimal), to stand for the storage of an edge box: SD
 * cards, eMMC, consumer SSDs without power-loss protection. With SORTER_FSYNC_COUNT_FILE (a file
 * of 16 zero bytes, on tmpfs so that counting writes nothing to a disk) it also counts them there:
 * two little-endian 64-bit counters, fsync then fdatasync, in shared memory that the benchmark
 * reads while the process runs. With SORTER_FSYNC_SNAPSHOT_DIR (a folder) it copies every file
 * named *.db or *.db-wal there right after each successful sync of it: that folder then holds what
 * a power cut would leave of those files when the disk keeps nothing that was not synced (the
 * power-cut test, test/e2e/power-cut.test.ts). With SORTER_PAGELOG_FILE (a file, on tmpfs) it
 * appends a line for every WAL frame header written ("W page commit offset": the page number, the
 * database size in pages on a commit's last frame or 0, the frame's offset in the WAL), every
 * write to a *.db file ("D bytes offset": a checkpoint copying pages back) and every sync of
 * either ("S wal" or "S db"): what `npm run wal-pages` counts per B-tree. Linux only; built by
 * bench/slow-disk.ts with the system C compiler. The delay is a sleep in the calling thread, as a
 * slow device's flush is.
 *
 * With SORTER_FSYNC_STALL=MS/EVERY_S (e.g. 1000/10) it also stalls, as an SD card does under
 * sustained writes: every EVERY_S seconds (a decimal, counted on the monotonic clock from when the
 * library was loaded) the first sync that starts after that moment takes MS milliseconds longer,
 * and any sync that starts while a stall lasts waits for its end, because a device's flush queue
 * holds everything behind the flush that stalled. A stall is thus a window [t, t + MS) in which no
 * sync completes before t + MS. The stalls are counted in the count file's third counter when the
 * file has one (24 bytes).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long delay_ns = 0;
static long long *counts = NULL;
static const char *snapshot_dir = NULL;
static int pagelog = -1;
static pthread_mutex_t pagelog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* Counters in the count file: fsync, fdatasync and, when the file is long enough, stalls. */
static int ncounts = 0;

/* The stall mode (SORTER_FSYNC_STALL): all in monotonic nanoseconds, guarded by stall_lock. */
static long long stall_ns = 0, stall_every_ns = 0, next_stall_at = 0, stall_until = 0;
static pthread_mutex_t stall_lock = PTHREAD_MUTEX_INITIALIZER;

static long long monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The stalls count from the load, not from the first sync: a process that starts syncing late
 * (a service that first waits for its sorter) still meets its first stall on schedule. */
__attribute__((constructor)) static void loaded(void) {
  next_stall_at = monotonic_ns();
}

static void init(void) {
  const char *ms = getenv("SORTER_FSYNC_DELAY_MS");
  if (ms) delay_ns = (long)(atof(ms) * 1e6);
  const char *stall = getenv("SORTER_FSYNC_STALL");
  if (stall) {
    double stall_ms = 0, every_s = 0;
    if (sscanf(stall, "%lf/%lf", &stall_ms, &every_s) == 2 && stall_ms > 0 && every_s > 0) {
      stall_ns = (long long)(stall_ms * 1e6);
      stall_every_ns = (long long)(every_s * 1e9);
      next_stall_at += stall_every_ns;
    }
  }
  snapshot_dir = getenv("SORTER_FSYNC_SNAPSHOT_DIR");
  const char *log = getenv("SORTER_PAGELOG_FILE");
  if (log) pagelog = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const char *file = getenv("SORTER_FSYNC_COUNT_FILE");
  if (file) {
    int fd = open(file, O_RDWR);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= (off_t)(2 * sizeof(long long))) {
      /* Map no more than the file holds: touching a page beyond its end is a SIGBUS. */
      ncounts = st.st_size >= (off_t)(3 * sizeof(long long)) ? 3 : 2;
      void *p = mmap(NULL, ncounts * sizeof(long long), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) counts = (long long *)p;
    }
    if (fd >= 0) close(fd);
  }
}

/* Copy the synced file behind `fd` into the snapshot folder (through a temporary name, renamed). */
static void snapshot(int fd) {
  char link[64], file[4096], to[4096], tmp[4200], buf[65536];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, file, sizeof file - 1);
  if (n <= 0) return;
  file[n] = 0;
  size_t len = strlen(file);
  int db = len > 3 && strcmp(file + len - 3, ".db") == 0;
  int wal = len > 7 && strcmp(file + len - 7, ".db-wal") == 0;
  if (!db && !wal) return;
  const char *base = strrchr(file, '/');
  snprintf(to, sizeof to, "%s/%s", snapshot_dir, base ? base + 1 : file);
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", to, (long)pthread_self());
  int in = open(file, O_RDONLY);
  if (in < 0) return;
  int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out >= 0) {
    off_t at = 0;
    for (ssize_t r; (r = pread(in, buf, sizeof buf, at)) > 0; at += r) {
      if (write(out, buf, r) != r) break;
    }
    close(out);
    rename(tmp, to);
  }
  close(in);
}

/* 1 for a *.db-wal file, 2 for a *.db file, 0 for anything else. */
static int db_file_kind(int fd) {
  char link[64], file[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, file, sizeof file - 1);
  if (n <= 0) return 0;
  file[n] = 0;
  if (n > 7 && strcmp(file + n - 7, ".db-wal") == 0) return 1;
  if (n > 3 && strcmp(file + n - 3, ".db") == 0) return 2;
  return 0;
}

static void pagelog_line(const char *line) {
  pthread_mutex_lock(&pagelog_lock);
  if (write(pagelog, line, strlen(line)) < 0) {}
  pthread_mutex_unlock(&pagelog_lock);
}

/* A write to the database or its WAL, logged (SORTER_PAGELOG_FILE). */
static void pagelog_write(int fd, const void *buf, size_t count, off_t offset) {
  pthread_once(&once, init);
  if (pagelog < 0) return;
  int kind = db_file_kind(fd);
  char line[96];
  if (kind == 1 && count == 24) {
    const unsigned char *b = buf;
    unsigned long page = ((unsigned long)b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
    unsigned long commit = ((unsigned long)b[4] << 24) | (b[5] << 16) | (b[6] << 8) | b[7];
    snprintf(line, sizeof line, "W %lu %lu %lld\n", page, commit, (long long)offset);
  } else if (kind == 2) {
    snprintf(line, sizeof line, "D %zu %lld\n", count, (long long)offset);
  } else {
    return;
  }
  pagelog_line(line);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void *, size_t, off_t);
  if (!real) real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
  pagelog_write(fd, buf, count, offset);
  return real(fd, buf, count, offset);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void *, size_t, off_t);
  if (!real) real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  pagelog_write(fd, buf, count, offset);
  return real(fd, buf, count, offset);
}

/*
 * A sync starting now: if a stall is due, this one starts it; if one lasts, wait for its end. The
 * lock is held only to read and move the schedule, never while sleeping, so that the syncs of
 * other threads that arrive during the stall see it and queue behind it too.
 */
static void stall_if_due(void) {
  if (stall_ns <= 0) return;
  long long now = monotonic_ns(), until = 0;
  pthread_mutex_lock(&stall_lock);
  if (now >= next_stall_at) {
    stall_until = now + stall_ns;
    /* One stall however many periods passed without a sync; the next on the same schedule. */
    next_stall_at += ((now - next_stall_at) / stall_every_ns + 1) * stall_every_ns;
    if (counts && ncounts > 2) __atomic_fetch_add(&counts[2], 1, __ATOMIC_RELAXED);
  }
  if (now < stall_until) until = stall_until;
  pthread_mutex_unlock(&stall_lock);
  if (until) {
    struct timespec ts = { until / 1000000000LL, until % 1000000000LL };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
  }
}

static void slow_down(int which, int fd) {
  pthread_once(&once, init);
  if (counts) __atomic_fetch_add(&counts[which], 1, __ATOMIC_RELAXED);
  if (pagelog >= 0) {
    int kind = db_file_kind(fd);
    if (kind) pagelog_line(kind == 1 ? "S wal\n" : "S db\n");
  }
  stall_if_due();
  if (delay_ns > 0) {
    struct timespec ts = { delay_ns / 1000000000L, delay_ns % 1000000000L };
    while (nanosleep(&ts, &ts) != 0) {}
  }
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  slow_down(0, fd);
  int r = real(fd);
  if (r == 0 && snapshot_dir) snapshot(fd);
  return r;
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  slow_down(1, fd);
  int r = real(fd);
  if (r == 0 && snapshot_dir) snapshot(fd);
  return r;
}
