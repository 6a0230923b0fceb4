// A sampling profiler of host time, preloaded into any program (for
// machines without perf or nsys, such as the H200 of docs/gpu-status.md):
//
//   gcc -O2 -shared -fPIC tools/hostprof/hostprof.c -o hostprof.so
//   HOSTPROF_OUT=/tmp/prof LD_PRELOAD=./hostprof.so nuvec-lm bench ...
//   python3 tools/hostprof/report.py /tmp/prof [--binary-dir DIR]
//
// Every HOSTPROF_US microseconds of the process's CPU time (default 500)
// SIGPROF takes the interrupted thread's call stack (glibc's backtrace);
// at exit the stacks go to HOSTPROF_OUT (raw pointers) and the process's
// memory map to HOSTPROF_OUT.maps, which report.py symbolizes here.
#define _GNU_SOURCE
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

enum { kDepth = 40, kMaxSamples = 200000 };
static void** g_buf;
static volatile long g_next;
static const char* g_out;

static void on_prof(int sig) {
  (void)sig;
  long i = __atomic_fetch_add(&g_next, 1, __ATOMIC_RELAXED);
  if (i >= kMaxSamples) return;
  void** row = g_buf + (size_t)i * kDepth;
  int n = backtrace(row, kDepth);
  for (int k = n; k < kDepth; ++k) row[k] = 0;
}

__attribute__((constructor)) static void hostprof_start(void) {
  g_out = getenv("HOSTPROF_OUT");
  if (!g_out) return;
  g_buf = mmap(0, sizeof(void*) * (size_t)kDepth * kMaxSamples, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g_buf == MAP_FAILED) return;
  void* warm[4];
  backtrace(warm, 4);  // loads the unwinder before any signal
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_prof;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &sa, 0);
  long us = getenv("HOSTPROF_US") ? atol(getenv("HOSTPROF_US")) : 500;
  struct itimerval t = {{0, us}, {0, us}};
  setitimer(ITIMER_PROF, &t, 0);
}

__attribute__((destructor)) static void hostprof_stop(void) {
  if (!g_out || g_buf == MAP_FAILED || !g_buf) return;
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, 0);
  long n = g_next < kMaxSamples ? g_next : kMaxSamples;
  FILE* f = fopen(g_out, "wb");
  if (f) {
    fwrite(g_buf, sizeof(void*) * kDepth, (size_t)n, f);
    fclose(f);
  }
  char maps[4096];
  snprintf(maps, sizeof maps, "%s.maps", g_out);
  int in = open("/proc/self/maps", O_RDONLY), out = open(maps, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char b[65536];
  ssize_t r;
  while (in >= 0 && out >= 0 && (r = read(in, b, sizeof b)) > 0) write(out, b, (size_t)r);
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  fprintf(stderr, "hostprof: %ld samples in %s\n", n, g_out);
}
