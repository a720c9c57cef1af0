/*
 * defassign.c - definite assignment: whether every read of a Python local
 * follows an assignment on every path from the entry (gj_check_assigned in
 * ir.h).
 *
 * CPython raises UnboundLocalError when a path reaches a read before any
 * assignment; a kernel cannot raise.  numba compiles such a function and
 * the read gives zero, so gpujit does too: a read that some path reaches
 * unassigned, while another path assigns first (a variable set in some
 * branches of a loop, read after it), is a WARNING and marks the variable
 * `maybe_unassigned` (lowering zeroes its slot at entry) and the read (its
 * `sub`: debug builds check it at run time and raise UnboundLocalError).  A read that no
 * path from the entry reaches assigned is a TypingError: no run of the
 * Python function reaches it without raising.
 *
 * Two forward dataflows over the locals, iterated to a fixpoint:
 * "assigned on every path" (entry set: the intersection of the
 * predecessors' exit sets, initially "all", the top of the lattice) and
 * "assigned on some path" (the union, initially none).  Parameters are
 * assigned at the entry.  Stack-slot variables are written by every
 * predecessor by construction (build.c) and are skipped.
 *
 * Input: a GjFunc from build.c (types not needed; f->blocks[i]->id == i).
 * Output: GJ_OK (maybe with warnings), or GJ_ERR with a TYPING diagnostic
 * at the first read that no assignment reaches, in block order.
 */
#include "ir.h"

#include <string.h>

typedef uint64_t Word;
enum { WORD_BITS = 64 };

static int has(const Word *s, int32_t v) {
    return (int)((s[v / WORD_BITS] >> (v % WORD_BITS)) & 1u);
}

static void add(Word *s, int32_t v) { s[v / WORD_BITS] |= (Word)1 << (v % WORD_BITS); }

/* Predecessor lists, computed once: block b's are pred[first[b] .. first[b+1]). */
typedef struct Preds {
    int32_t *first;   /* [nblocks + 1] */
    int32_t *pred;    /* [number of edges] */
} Preds;

static GjStatus build_preds(GjCtx *c, const GjFunc *f, Preds *p) {
    int32_t nb = f->nblocks, nedges = 0;
    p->first = GJ_NEW_N(&c->arena, int32_t, nb + 1);
    if (!p->first)
        return GJ_ERR;
    for (int32_t b = 0; b < nb; b++)
        for (int32_t s = 0; s < f->blocks[b]->nsucc; s++, nedges++)
            p->first[f->blocks[b]->succ[s] + 1]++;
    for (int32_t b = 0; b < nb; b++)
        p->first[b + 1] += p->first[b];
    int32_t *fill = GJ_NEW_N(&c->arena, int32_t, nb + 1);
    p->pred = GJ_NEW_N(&c->arena, int32_t, nedges + 1);
    if (!fill || !p->pred)
        return GJ_ERR;
    for (int32_t b = 0; b < nb; b++)
        for (int32_t s = 0; s < f->blocks[b]->nsucc; s++) {
            int32_t to = f->blocks[b]->succ[s];
            p->pred[p->first[to] + fill[to]++] = b;
        }
    return GJ_OK;
}

/* cur = the locals assigned on entry to block bi: `entry` for block 0, else
   the intersection (every path) or union (some path) of the predecessors'
   exit sets. */
static void entry_set(const Preds *p, const Word *out, const Word *entry, int32_t bi, Word *cur,
                      size_t row, int some) {
    if (bi == 0) {
        memcpy(cur, entry, sizeof(Word) * row);
        return;
    }
    memset(cur, some ? 0 : 0xff, sizeof(Word) * row);
    for (int32_t k = p->first[bi]; k < p->first[bi + 1]; k++)
        for (size_t w = 0; w < row; w++) {
            Word x = out[(size_t)p->pred[k] * row + w];
            cur[w] = some ? cur[w] | x : cur[w] & x;
        }
}

/* Fills out[bi * row ...] with the locals assigned at each block's exit on
   every path (some = 0) or on some path (some = 1). */
static void solve(const GjFunc *f, const Preds *preds, const Word *entry, Word *out, Word *cur,
                  size_t row, int some) {
    memset(out, some ? 0 : 0xff, sizeof(Word) * (size_t)f->nblocks * row);
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t bi = 0; bi < f->nblocks; bi++) {
            entry_set(preds, out, entry, bi, cur, row, some);
            const GjBlock *b = f->blocks[bi];
            for (int32_t k = 0; k < b->nins; k++)
                if (b->ins[k].op == GJ_OP_STORE_VAR)
                    add(cur, b->ins[k].var);
            Word *bout = out + (size_t)bi * row;
            if (memcmp(cur, bout, sizeof(Word) * row) != 0) {
                memcpy(bout, cur, sizeof(Word) * row);
                changed = 1;
            }
        }
    }
}

GjStatus gj_check_assigned(GjCtx *c, GjFunc *f) {
    int32_t nb = f->nblocks;
    size_t row = (size_t)(f->nvars + WORD_BITS - 1) / WORD_BITS;
    if (nb == 0 || row == 0)
        return GJ_OK;
    Word *must = GJ_NEW_N(&c->arena, Word, (size_t)nb * row);   /* at each block's exit */
    Word *may = GJ_NEW_N(&c->arena, Word, (size_t)nb * row);
    Word *cur = GJ_NEW_N(&c->arena, Word, row), *cur_may = GJ_NEW_N(&c->arena, Word, row);
    Word *entry = GJ_NEW_N(&c->arena, Word, row);
    Preds preds;
    if (!must || !may || !cur || !cur_may || !entry || build_preds(c, f, &preds) != GJ_OK)
        return gj_error(c, GJ_DIAG_INTERNAL, (GjLoc){0, -1, -1}, "out of memory");
    for (int32_t v = 0; v < f->nvars; v++)
        if (f->vars[v].kind != GJ_VAR_LOCAL)
            add(entry, v);
    solve(f, &preds, entry, must, cur, row, 0);
    solve(f, &preds, entry, may, cur, row, 1);

    /* At the fixpoint, replay each block and check its reads. */
    for (int32_t bi = 0; bi < nb; bi++) {
        entry_set(&preds, must, entry, bi, cur, row, 0);
        entry_set(&preds, may, entry, bi, cur_may, row, 1);
        GjBlock *b = f->blocks[bi];
        for (int32_t k = 0; k < b->nins; k++) {
            GjIns *in = &b->ins[k];
            if (in->op == GJ_OP_STORE_VAR) {
                add(cur, in->var);
                add(cur_may, in->var);
            } else if (in->op == GJ_OP_LOAD_VAR && !has(cur, in->var)) {
                GjVar *v = &f->vars[in->var];
                if (!has(cur_may, in->var))
                    return gj_error(c, GJ_DIAG_TYPING, in->loc,
                                    "local variable '%s' is read before it is assigned "
                                    "(Python would raise UnboundLocalError here)",
                                    v->name);
                gj_warn(c, in->loc,
                        "local variable '%s' may be used before it is assigned; "
                        "where no assignment came first, it reads as zero of its type (Python "
                        "would raise UnboundLocalError)",
                        v->name);
                v->maybe_unassigned = 1;
                in->sub = 1;   /* debug builds check this read */
            }
        }
    }
    return GJ_OK;
}
