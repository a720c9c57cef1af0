/*
 * cpuwarp.c - the collectives kernel code calls on the CPU target
 * (cpuexec.h): the block barrier (gj_cpu_barrier, gj_cpu_syncthreads_op),
 * syncwarp, shuffles, votes, match, activemask and threadfence.
 *
 * With fibers, a thread writes its part into its Slot and parks (at the
 * block barrier, or at a warp operation with its mask); the last one to
 * arrive computes every participant's result and releases them.  Without
 * fibers (a kernel the compiler said never synchronises) a group of one
 * passes and a larger one is reported as the compiler's error.  A misuse
 * (a mask without the caller, lanes meeting at different operations, a
 * deadlock) is recorded with the thread it concerns and ends the block;
 * gj_cpu_launch returns it.  The fibers themselves are cpuexec.c's.
 */
#include "cpuexec.h"
#include "cpuexec_impl.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

/* ---- called from kernel code: misuse --------------------------------------- */

/* Records the launch's first misuse, prefixed with the thread it concerns;
   gj_cpu_launch returns it.  Later ones are dropped. */
static void record(GjCpuBlock *b, const GjCpuThread *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void record(GjCpuBlock *b, const GjCpuThread *t, const char *fmt, ...) {
    Job *job = b->job;
    if (atomic_exchange(&job->failed, 1))
        return;
    int k = snprintf(job->why, sizeof job->why,
                     "thread (%u, %u, %u) of block (%u, %u, %u): ", t->tid[0], t->tid[1], t->tid[2],
                     t->bid[0], t->bid[1], t->bid[2]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(job->why + k, sizeof job->why - (size_t)k, fmt, ap);
    va_end(ap);
}

/* A misuse in kernel code: recorded, then with fibers the block is
   abandoned (the running fiber switches to the scheduler, never to return);
   a thread without fibers carries on and the launch fails at its end. */
#define FAIL(t, ...)                             \
    do {                                         \
        GjCpuBlock *b_ = (t)->block;             \
        record(b_, (t), __VA_ARGS__);            \
        if (b_->fibered) {                       \
            b_->failed = 1;                      \
            gj_cpu_switch_away(b_, b_->current); \
        }                                        \
    } while (0)

/* Without fibers there is nothing to switch to: a group of one passes, a
   larger one is the compiler's error (the launcher must ask for fibers when
   a kernel may synchronise), reported by the launch. */
static void unsynchronised(GjCpuBlock *b, unsigned members) {
    if (members > 1)
        atomic_store_explicit(&b->job->misuse, 1, memory_order_relaxed);
}

/* The lanes of warp w that exist (fewer in a partial last warp). */
static uint32_t warp_lanes(const GjCpuBlock *b, unsigned w) {
    unsigned c = b->nthreads - w * WARP;
    return c < WARP ? ~(~0u << c) : ~0u;
}

/* numba.cuda's names, for messages. */
static const char *op_name(const Slot *s) {
    static const char *const names[][4] = {
        [OP_BARRIER] = {"syncthreads"},
        [OP_SYNCTHREADS] = {"syncthreads_count", "syncthreads_and", "syncthreads_or"},
        [OP_SYNCWARP] = {"syncwarp"},
        [OP_SHFL] = {"shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"},
        [OP_VOTE] = {"all_sync", "any_sync", "eq_sync", "ballot_sync"},
        [OP_MATCH] = {"match_any_sync", "match_all_sync"},
        [OP_ACTIVEMASK] = {"activemask"},
    };
    return names[s->op][s->mode];
}

/* An out-of-range mode is the compiler's error: reported, mode 0 used. */
static int32_t check_mode(GjCpuThread *t, const char *what, int32_t mode, int32_t max) {
    if (mode >= 0 && mode <= max)
        return mode;
    FAIL(t, "internal error: %s called with mode %d", what, mode);
    return 0;
}

/* Completes every activemask() call of the block: each gets the lanes of
   its warp parked at activemask() with it.  Called once no fiber can run,
   so every other lane is parked elsewhere or has returned: the lanes that
   reached activemask() together are those that would run it together on
   the GPU, in divergent code too.  0 if none was waiting. */
static int settle_activemask(GjCpuBlock *b) {
    int any = 0;
    for (unsigned w = 0; w * WARP < b->nthreads; w++) {
        Fiber *l0 = &b->fibers[w * WARP];
        uint32_t at = 0;
        for (uint32_t r = b->warps[w].parked; r; r &= r - 1)
            if (l0[__builtin_ctz(r)].slot.op == OP_ACTIVEMASK)
                at |= 1u << __builtin_ctz(r);
        for (uint32_t r = at; r; r &= r - 1) {
            l0[__builtin_ctz(r)].slot.result = at;
            l0[__builtin_ctz(r)].wait = RUNNABLE;
        }
        b->warps[w].parked &= ~at;
        any |= at != 0;
    }
    return any;
}

/* Nothing can run and a warp operation still waits (schedule()): the
   activemask() calls complete, or else name the first waiting lane and the
   lane it waits for, and abandon the block. */
int gj_cpu_settle(GjCpuBlock *b) {
    if (settle_activemask(b))
        return 1;
    b->failed = 1;
    for (unsigned i = 0; i < b->nthreads; i++) {
        const Slot *s = &b->fibers[i].slot;
        if (b->fibers[i].wait != AT_WARP_OP)
            continue;
        const Fiber *l0 = &b->fibers[i / WARP * WARP];
        uint32_t need = s->mask & ~b->warps[i / WARP].exited;
        for (; need; need &= need - 1) {
            unsigned j = (unsigned)__builtin_ctz(need);
            const Slot *o = &l0[j].slot;
            if (l0[j].wait == AT_WARP_OP && o->mask == s->mask)
                continue;
            if (l0[j].wait == AT_BARRIER)
                record(b, &b->threads[i],
                       "%s with mask 0x%08x waited for lane %u, which "
                       "reached %s instead (a deadlock on the GPU)",
                       op_name(s), s->mask, j, op_name(o));
            else
                record(b, &b->threads[i],
                       "%s with mask 0x%08x waited for lane %u, which "
                       "waits at %s with mask 0x%08x (a deadlock on the GPU)",
                       op_name(s), s->mask, j, op_name(o), o->mask);
            return 0;
        }
    }
    record(b, &b->threads[0], "internal error: the block's threads wait for each other");
    return 0;
}

/* ---- called from kernel code: collectives ----------------------------------- */

/* The lane whose value `lane` reads, by the rules of PTX shfl.sync: the
   warp is cut into sections of `width` lanes; up and down stay within the
   caller's section, idx wraps within it, xor may reach lower sections but
   not higher ones; a lane out of those bounds, or not taking part, reads
   its own value (on the GPU a lane not taking part gives an undefined one). */
static unsigned shfl_source(unsigned lane, const Slot *s, uint32_t part) {
    uint32_t seg = (WARP - (uint32_t)s->width) & (WARP - 1);   /* lane bits naming the section */
    int64_t lo = lane & seg, hi = lo | (~seg & (WARP - 1));
    uint32_t arg = (uint32_t)s->arg;
    int64_t j;
    int ok;
    switch (s->mode) {
    case GJ_CPU_SHFL_IDX:
        j = lo | (arg & ~seg & (WARP - 1));
        ok = 1;
        break;
    case GJ_CPU_SHFL_UP:
        j = (int64_t)lane - arg;
        ok = j >= lo;
        break;
    case GJ_CPU_SHFL_DOWN:
        j = (int64_t)lane + arg;
        ok = j <= hi;
        break;
    default:
        j = lane ^ arg;
        ok = j <= hi;
        break;
    }
    return ok && (part >> j & 1) ? (unsigned)j : lane;
}

/* Computes every result of a warp operation whose lanes `part` (bits of
   lanes l0[0..31]) have all arrived with the same operation and mask. */
static void collect(Fiber *l0, uint32_t part) {
    uint32_t ballot = 0;
    int same = 1;
    const Slot *first = &l0[__builtin_ctz(part)].slot;
    for (uint32_t r = part; r; r &= r - 1) {
        unsigned j = (unsigned)__builtin_ctz(r);
        ballot |= (uint32_t)(l0[j].slot.value != 0) << j;
        same &= l0[j].slot.value == first->value;
    }
    for (uint32_t r = part; r; r &= r - 1) {
        unsigned j = (unsigned)__builtin_ctz(r);
        Slot *s = &l0[j].slot;
        if (s->op == OP_SHFL) {
            s->result = l0[shfl_source(j, s, part)].slot.value;
        } else if (s->op == OP_VOTE) {
            s->result = s->mode == GJ_CPU_VOTE_ALL   ? ballot == part
                        : s->mode == GJ_CPU_VOTE_ANY ? ballot != 0
                        : s->mode == GJ_CPU_VOTE_EQ  ? ballot == 0 || ballot == part
                                                     : ballot;
        } else if (s->op == OP_MATCH && s->mode == GJ_CPU_MATCH_ANY) {
            uint32_t m = 0;
            for (uint32_t q = part; q; q &= q - 1)
                m |= (uint32_t)(l0[__builtin_ctz(q)].slot.value == s->value) << __builtin_ctz(q);
            s->result = m;
        } else if (s->op == OP_MATCH) {
            s->result = same ? part : 0;   /* the lanes that took part, as the GPU gives */
            s->pred = same;
        }
    }
}

/* Completes the warp operation with mask m in warp w if every lane of m
   that has not returned is parked at one with mask m; 0 if some are still
   to come.  Lanes that met with one mask at different operations are a
   misuse. */
static int warp_try(GjCpuBlock *b, unsigned w, uint32_t m) {
    Warp *wp = &b->warps[w];
    Fiber *l0 = &b->fibers[w * WARP];
    uint32_t part = m & ~wp->exited;
    if (!part || (part & ~wp->parked))   /* m == 0: activemask(), settled apart */
        return 0;
    for (uint32_t r = part; r; r &= r - 1)
        if (l0[__builtin_ctz(r)].slot.mask != m)
            return 0;
    unsigned a = (unsigned)__builtin_ctz(part);
    for (uint32_t r = part; r; r &= r - 1) {
        unsigned j = (unsigned)__builtin_ctz(r);
        if (l0[j].slot.op != l0[a].slot.op || l0[j].slot.mode != l0[a].slot.mode)
            FAIL(&b->threads[w * WARP + a],
                 "lanes %u and %u of warp %u met with mask 0x%08x at "
                 "different warp operations, %s and %s",
                 a, j, w, m, op_name(&l0[a].slot), op_name(&l0[j].slot));
    }
    collect(l0, part);
    wp->parked &= ~part;
    for (uint32_t r = part; r; r &= r - 1)
        l0[__builtin_ctz(r)].wait = RUNNABLE;
    return 1;
}

/* Fiber i has returned: the warp operations waiting only for it complete. */
void gj_cpu_warp_exit(GjCpuBlock *b, unsigned i) {
    unsigned w = i / WARP;
    Warp *wp = &b->warps[w];
    wp->exited |= 1u << (i % WARP);
    uint32_t todo = wp->parked;
    while (todo) {
        unsigned j = (unsigned)__builtin_ctz(todo);
        warp_try(b, w, b->fibers[w * WARP + j].slot.mask);
        todo &= wp->parked & ~(1u << j);
    }
}

/* Runs warp operation a for thread t and returns t's slot, holding the
   result.  With fibers, t parks until its mask's lanes have all come;
   without (a block of one thread), t is the only lane. */
static const Slot *warp_op(GjCpuThread *t, Fiber *alone, Slot a) {
    GjCpuBlock *b = t->block;
    uint32_t me = 1u << t->lane;
    if (!(a.mask & me)) {
        FAIL(t, "%s with mask 0x%08x, which does not name the calling lane %u", op_name(&a), a.mask,
             t->lane);
        a.mask |= me;
    }
    if (a.op == OP_SHFL && (a.width < 1 || a.width > (int32_t)WARP || (a.width & (a.width - 1)))) {
        FAIL(t, "%s with width %d: the width must be a power of two from 1 to 32", op_name(&a),
             a.width);
        a.width = WARP;
    }
    if (!b->fibered) {
        unsynchronised(b, (unsigned)__builtin_popcount(warp_lanes(b, t->warp)));
        alone->slot = a;
        collect(alone, 1);
        return &alone->slot;
    }
    unsigned i = (unsigned)(t - b->threads);
    Fiber *f = &b->fibers[i];
    f->slot = a;
    f->wait = AT_WARP_OP;
    b->warps[t->warp].parked |= me;
    if (!warp_try(b, t->warp, a.mask))
        gj_cpu_switch_away(b, i);
    return &f->slot;
}

void gj_cpu_barrier(GjCpuThread *t) {
    GjCpuBlock *b = t->block;
    if (!b->fibered) {
        unsynchronised(b, b->nthreads);
        return;
    }
    unsigned i = (unsigned)(t - b->threads);
    b->fibers[i].slot.op = OP_BARRIER;
    b->fibers[i].slot.mode = 0;
    gj_cpu_barrier_arrive(b, i);
}

int32_t gj_cpu_syncthreads_op(GjCpuThread *t, int32_t predicate, int32_t op) {
    GjCpuBlock *b = t->block;
    op = check_mode(t, "syncthreads_op", op, GJ_CPU_SYNC_OR);
    if (!b->fibered) {
        unsynchronised(b, b->nthreads);
        return predicate != 0;   /* count, and, or: alike for one thread */
    }
    unsigned i = (unsigned)(t - b->threads);
    Slot *s = &b->fibers[i].slot;
    s->op = OP_SYNCTHREADS;
    s->mode = op;
    b->bar.npred++;
    b->bar.ntrue += predicate != 0;
    gj_cpu_barrier_arrive(b, i);
    return (int32_t)s->result;
}

void gj_cpu_syncwarp(GjCpuThread *t) { gj_cpu_syncwarp_mask(t, 0xffffffffu); }

void gj_cpu_syncwarp_mask(GjCpuThread *t, uint32_t mask) {
    Fiber alone;
    warp_op(t, &alone, (Slot){.op = OP_SYNCWARP, .mask = mask});
}

uint64_t gj_cpu_warp_shfl(GjCpuThread *t, uint32_t mask, uint64_t value, int32_t lane_or_delta,
                          int32_t width, int32_t mode) {
    Fiber alone;
    Slot a = {.op = OP_SHFL,
              .mode = check_mode(t, "warp_shfl", mode, GJ_CPU_SHFL_XOR),
              .mask = mask,
              .value = value,
              .arg = lane_or_delta,
              .width = width};
    return warp_op(t, &alone, a)->result;
}

uint32_t gj_cpu_warp_vote(GjCpuThread *t, uint32_t mask, int32_t predicate, int32_t mode) {
    Fiber alone;
    Slot a = {.op = OP_VOTE,
              .mode = check_mode(t, "warp_vote", mode, GJ_CPU_VOTE_BALLOT),
              .mask = mask,
              .value = predicate != 0};
    return (uint32_t)warp_op(t, &alone, a)->result;
}

uint32_t gj_cpu_warp_match(GjCpuThread *t, uint32_t mask, uint64_t value, int32_t mode,
                           int32_t *all_pred) {
    Fiber alone;
    Slot a = {.op = OP_MATCH,
              .mode = check_mode(t, "warp_match", mode, GJ_CPU_MATCH_ALL),
              .mask = mask,
              .value = value};
    const Slot *s = warp_op(t, &alone, a);
    if (all_pred && a.mode == GJ_CPU_MATCH_ALL)
        *all_pred = s->pred;
    return (uint32_t)s->result;
}

uint32_t gj_cpu_activemask(GjCpuThread *t) {
    GjCpuBlock *b = t->block;
    if (!b->fibered) {
        unsynchronised(b, (unsigned)__builtin_popcount(warp_lanes(b, t->warp)));
        return 1u << t->lane;
    }
    /* Parks with mask 0, which no warp operation matches, until nothing
       else can run (gj_cpu_settle). */
    unsigned i = (unsigned)(t - b->threads);
    Fiber *f = &b->fibers[i];
    f->slot = (Slot){.op = OP_ACTIVEMASK};
    f->wait = AT_WARP_OP;
    b->warps[t->warp].parked |= 1u << t->lane;
    gj_cpu_switch_away(b, i);
    return (uint32_t)f->slot.result;
}

void gj_cpu_threadfence(GjCpuThread *t) {
    (void)t;
    atomic_thread_fence(memory_order_seq_cst);
}
