/*
 * cuda_emu.c - the scheduler of cuda_emu.h: every CUDA thread of a block is
 * a ucontext coroutine; a thread runs until it waits in a warp collective
 * or a barrier (or, at random, just after one), then the next runs, in a
 * random order each round.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cuda_emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define EMU_STACK_BYTES (128u * 1024u)
#define EMU_MAX_THREADS 1024u

typedef struct {
  ucontext_t ctx;
  int done;
  unsigned tid;
} emu_thread;

typedef struct {
  int arrived;
  unsigned gen;
  int kind[32], arg[32];
  uint64_t val[32], res[32];
} emu_warp;

static emu_thread threads[EMU_MAX_THREADS];
static emu_warp warps[EMU_MAX_THREADS / 32u];
static char *stacks[EMU_MAX_THREADS];
static unsigned n_threads;
static emu_thread *cur;
static ucontext_t sched;
static unsigned long progress;
static int bar_arrived, bar_live, bar_or, bar_res;
static unsigned bar_gen;
static int errors;
static void (*block_fn)(void *);
static void *block_arg;
static uint64_t rng = 0x2545f4914f6cdd1dull;

uint32_t emu_random(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

unsigned emu_tid(void) { return cur->tid; }
unsigned emu_nthreads(void) { return n_threads; }
int emu_errors(void) { return errors; }

unsigned emu_block_idx, emu_grid_dim = 1u;

static void yield(void) { swapcontext(&cur->ctx, &sched); }

/* now and then, let another thread run past a synchronisation point first */
static void maybe_yield(void)
{
  if (emu_random() % 3u == 0) yield();
}

static void release_barrier(void)
{
  bar_res = bar_or;
  bar_or = 0;
  bar_arrived = 0;
  bar_gen++;
  progress++;
}

uint64_t emu_collective(int kind, uint64_t v, int arg, unsigned mask)
{
  if (mask != 0xffffffffu) {
    fprintf(stderr, "cuda_emu: thread %u: a collective with mask %#x (the ops use full warps)\n", cur->tid, mask);
    errors++;
  }
  unsigned lane = cur->tid & 31u;
  emu_warp *w = &warps[cur->tid >> 5];
  w->kind[lane] = kind;
  w->val[lane] = v;
  w->arg[lane] = arg;
  unsigned gen = w->gen;
  progress++;
  if (++w->arrived == 32) {
    uint64_t acc = 0;
    for (int l = 0; l < 32; l++) {
      if (w->kind[l] != w->kind[0]) {
        fprintf(stderr, "cuda_emu: warp %u: lanes 0 and %d in different collectives (%d, %d)\n", cur->tid >> 5, l,
                w->kind[0], w->kind[l]);
        errors++;
      }
      switch (w->kind[0]) {
      case EMU_SHFL: w->res[l] = w->val[w->arg[l] & 31]; break;
      case EMU_SHFL_UP: w->res[l] = l >= w->arg[l] ? w->val[l - w->arg[l]] : w->val[l]; break;
      case EMU_SHFL_XOR: w->res[l] = w->val[(l ^ w->arg[l]) & 31]; break;
      case EMU_BALLOT: acc |= (uint64_t)(w->val[l] != 0) << l; break;
      case EMU_REDUCE_OR: acc |= w->val[l]; break;
      case EMU_REDUCE_ADD: acc = (uint32_t)(acc + w->val[l]); break;
      default: break;
      }
    }
    if (kind == EMU_BALLOT || kind == EMU_REDUCE_OR || kind == EMU_REDUCE_ADD)
      for (int l = 0; l < 32; l++) w->res[l] = acc;
    w->arrived = 0;
    w->gen++;
  } else {
    while (w->gen == gen) yield();
  }
  uint64_t r = w->res[lane];
  maybe_yield();
  return r;
}

int emu_barrier(int pred)
{
  unsigned gen = bar_gen;
  bar_or |= pred;
  progress++;
  if (++bar_arrived == bar_live)
    release_barrier();
  else
    while (bar_gen == gen) yield();
  int r = bar_res;
  maybe_yield();
  return r;
}

static void trampoline(void)
{
  block_fn(block_arg);
  cur->done = 1;
  bar_live--;
  progress++;
  /* threads that exit count as arrived at the barrier the rest wait in */
  if (bar_arrived && bar_arrived == bar_live) release_barrier();
  /* uc_link returns to the scheduler */
}

void emu_run_block(unsigned n, void (*fn)(void *), void *arg)
{
  if (n == 0 || n > EMU_MAX_THREADS || n % 32u) {
    fprintf(stderr, "cuda_emu: block of %u threads (want a multiple of 32 up to %u)\n", n, EMU_MAX_THREADS);
    errors++;
    return;
  }
  n_threads = n;
  block_fn = fn;
  block_arg = arg;
  memset(warps, 0, sizeof warps);
  bar_arrived = bar_or = bar_res = 0;
  bar_live = (int)n;
  for (unsigned t = 0; t < n; t++) {
    emu_thread *h = &threads[t];
    if (!stacks[t] && !(stacks[t] = malloc(EMU_STACK_BYTES))) {
      fprintf(stderr, "cuda_emu: out of memory for thread stacks\n");
      errors++;
      return;
    }
    h->tid = t;
    h->done = 0;
    getcontext(&h->ctx);
    h->ctx.uc_stack.ss_sp = stacks[t];
    h->ctx.uc_stack.ss_size = EMU_STACK_BYTES;
    h->ctx.uc_link = &sched;
    makecontext(&h->ctx, trampoline, 0);
  }
  int stuck = 0;
  for (;;) {
    unsigned long before = progress;
    unsigned start = emu_random() % n, step = emu_random() % 2u ? 1u : n - 1u, alive = 0;
    for (unsigned k = 0; k < n; k++) {
      emu_thread *h = &threads[(start + k * step) % n];
      if (h->done) continue;
      alive++;
      cur = h;
      swapcontext(&sched, &h->ctx);
    }
    if (!alive) return;
    if (progress != before) {
      stuck = 0;
    } else if (++stuck > 4) { /* a full round of waiting threads, several times: nobody can move */
      fprintf(stderr, "cuda_emu: deadlock: %u threads wait forever (a collective or barrier some never reach)\n",
              alive);
      errors++;
      return;
    }
  }
}
