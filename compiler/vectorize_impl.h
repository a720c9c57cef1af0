/*
 * vectorize_impl.h - what the vectoriser's two files share, and nothing
 * else includes (vectorize.h is the contract):
 *
 *   vectorize_cfg.c  the body's control flow: blocks, loops, the linear
 *                    order the vector body runs them in, the edges that
 *                    leave loops
 *   vectorize.c      which bodies it takes, the vector body, the row
 */
#ifndef GJ_VECTORIZE_IMPL_H
#define GJ_VECTORIZE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "gj.h"

/* An open-addressing map from LLVM objects to LLVM objects, in the arena. */
typedef struct GjVecMap {
    const void **keys;
    void **vals;
    uint32_t cap, n;
} GjVecMap;

void *gj_vec_map_get(const GjVecMap *m, const void *k);
GjStatus gj_vec_map_put(GjArena *a, GjVecMap *m, const void *k, void *v);

typedef struct GjVecLoop {
    int header, parent;       /* block; enclosing loop or -1 */
    int depth, first, last;   /* nesting depth; positions in the order */
    char *in;                 /* [nblocks]: the loop's blocks */
    LLVMValueRef mask;        /* the vector header's mask phi */
    LLVMBasicBlockRef vhead;
} GjVecLoop;

/* An edge from -> to that leaves loops chain[0] (innermost) .. chain[n-1].
   At the header of each, acc[j] are the lanes that took the edge in an
   iteration so far and keep[j][k] their values of to's k-th phi; upd and
   kupd the same after the iteration, which after the loop are the edge's. */
typedef struct GjVecExit {
    int from, to, nlevels, nvals;
    int *chain;
    LLVMValueRef *acc, *upd, *keep, *kupd;   /* [nlevels], [nlevels * nvals] */
} GjVecExit;

/* One vectorisation: the scalar body, its plan, the vector body built. */
typedef struct GjVec {
    GjCtx *c;
    GjArena *arena;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMValueRef fn, vfn;
    unsigned width, lane;
    const char *why;          /* why the body stays scalar */
    int nblocks;
    LLVMBasicBlockRef *bb;
    GjVecMap index;                /* block -> its index + 1 */
    int *npred, **pred;       /* distinct predecessors */
    int *loop;                /* innermost loop of each block, or -1 */
    int nloops;
    GjVecLoop *loops;
    int *order, *pos, norder; /* the linear order, each block's position */
    int nexits;
    GjVecExit *exits;
    LLVMValueRef *out;        /* [2 * nblocks]: masks of each block's two successor edges */
    LLVMValueRef *mask;       /* [nblocks] */
    GjVecMap vals;                 /* scalar value -> vector (varying) or scalar (uniform) */
    GjVecMap uniform;              /* uniform instructions -> themselves */
    GjVecMap splats;               /* scalar -> its broadcast */
    LLVMTypeRef i1v;
} GjVec;

/* Records why the body stays scalar (the first reason wins); returns 0. */
int gj_vec_reject(GjVec *V, const char *why);
/* n zeroed items of `size` bytes in the compile's arena, or NULL. */
void *gj_vec_alloc(GjVec *V, size_t n, size_t size);
/* A block's index in V->bb; its s-th successor's; its number of successors. */
int gj_vec_block(const GjVec *V, LLVMBasicBlockRef bb);
int gj_vec_succ(const GjVec *V, int blk, unsigned s);
unsigned gj_vec_nsucc(const GjVec *V, int blk);
unsigned gj_vec_count_phis(LLVMBasicBlockRef bb);

/* The plan of V->fn: its blocks (bb, pred), loops (innermost first), the
   linear order (order, pos; each loop's blocks consecutive, its header
   first) and the edges that leave loops; 0 with V->why when the control flow
   is not one the masks express (unreachable blocks, irreducible loops). */
int gj_vec_plan(GjVec *V);
/* Whether V->fn's control flow has a cycle (V->fn, c and arena set). */
int gj_vec_has_cycle(GjVec *V);

#endif
