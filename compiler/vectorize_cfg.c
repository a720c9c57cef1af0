/*
 * vectorize_cfg.c - the control flow of a body that vectorize.c turns into
 * a vector body (vectorize_impl.h): its blocks and their predecessors, its
 * loops (natural loops of back edges found by dominators; an irreducible
 * cycle is refused), one linear order of the blocks, and the edges that
 * leave loops.
 *
 * The order is topological once each loop's back edges are left out, with
 * each loop's blocks consecutive and its header first: each region (the
 * function, a loop) is ordered depth-first with each loop inside it as one
 * node, then that loop's own blocks go in its place.  In that order every
 * definition comes before its uses and a loop is one stretch that the
 * vector body repeats while any lane goes round it.
 */
#include "vectorize_impl.h"

#include <string.h>

/* ---- pointer maps --------------------------------------------------------- */

static uint32_t slot_of(const GjVecMap *m, const void *k) {
    uint64_t h = ((uint64_t)(uintptr_t)k >> 4) * 0x9E3779B97F4A7C15ull;
    uint32_t i = (uint32_t)(h >> 32) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

void *gj_vec_map_get(const GjVecMap *m, const void *k) {
    if (!m->cap)
        return NULL;
    uint32_t i = slot_of(m, k);
    return m->keys[i] ? m->vals[i] : NULL;
}

GjStatus gj_vec_map_put(GjArena *a, GjVecMap *m, const void *k, void *v) {
    if (2 * (m->n + 1) > m->cap) {
        GjVecMap g = {.cap = m->cap ? 2 * m->cap : 64};
        g.keys = GJ_NEW_N(a, const void *, g.cap);
        g.vals = GJ_NEW_N(a, void *, g.cap);
        if (!g.keys || !g.vals)
            return GJ_ERR;
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                uint32_t j = slot_of(&g, m->keys[i]);
                g.keys[j] = m->keys[i];
                g.vals[j] = m->vals[i];
                g.n++;
            }
        *m = g;
    }
    uint32_t i = slot_of(m, k);
    m->n += !m->keys[i];
    m->keys[i] = k;
    m->vals[i] = v;
    return GJ_OK;
}

int gj_vec_reject(GjVec *V, const char *why) {
    if (!V->why)
        V->why = why;
    return 0;
}

int gj_vec_block(const GjVec *V, LLVMBasicBlockRef bb) {
    return (int)(intptr_t)gj_vec_map_get(&V->index, bb) - 1;
}

void *gj_vec_alloc(GjVec *V, size_t n, size_t size) {
    return gj_arena_alloc(V->arena, (n ? n : 1) * size);
}

/* ---- the control-flow graph: blocks, loops, the order --------------------- */

static int add_pred(GjVec *V, int to, int from) {
    for (int k = 0; k < V->npred[to]; k++)
        if (V->pred[to][k] == from)
            return 1;
    int *p = gj_vec_alloc(V, (size_t)V->npred[to] + 1, sizeof *p);
    if (!p)
        return gj_vec_reject(V, "out of memory");
    if (V->npred[to])
        memcpy(p, V->pred[to], (size_t)V->npred[to] * sizeof *p);
    p[V->npred[to]++] = from;
    V->pred[to] = p;
    return 1;
}

int gj_vec_succ(const GjVec *V, int blk, unsigned s) {
    return gj_vec_block(V, LLVMGetSuccessor(LLVMGetBasicBlockTerminator(V->bb[blk]), s));
}

unsigned gj_vec_nsucc(const GjVec *V, int blk) {
    return LLVMGetNumSuccessors(LLVMGetBasicBlockTerminator(V->bb[blk]));
}

static int index_blocks(GjVec *V) {
    V->nblocks = (int)LLVMCountBasicBlocks(V->fn);
    V->bb = gj_vec_alloc(V, (size_t)V->nblocks, sizeof *V->bb);
    V->npred = gj_vec_alloc(V, (size_t)V->nblocks, sizeof *V->npred);
    V->pred = gj_vec_alloc(V, (size_t)V->nblocks, sizeof *V->pred);
    if (!V->bb || !V->npred || !V->pred)
        return gj_vec_reject(V, "out of memory");
    LLVMGetBasicBlocks(V->fn, V->bb);
    for (int i = 0; i < V->nblocks; i++)
        if (gj_vec_map_put(V->arena, &V->index, V->bb[i], (void *)(intptr_t)(i + 1)) != GJ_OK)
            return gj_vec_reject(V, "out of memory");
    for (int i = 0; i < V->nblocks; i++)
        for (unsigned s = 0; s < gj_vec_nsucc(V, i); s++)
            if (!add_pred(V, gj_vec_succ(V, i, s), i))
                return 0;
    return 1;
}

/* Depth-first from the entry: the reverse postorder (rpo[block], the
   block's number in it) and the retreating edges (to a block on the path),
   2 * nretreat entries (from, to).  Every block must be reachable. */
static int depth_first(GjVec *V, int *rpo, int *retreat, int *nretreat) {
    int n = V->nblocks, top = 0, seen = 1, done = n;
    int *stack = gj_vec_alloc(V, (size_t)n, sizeof *stack);
    unsigned *next = gj_vec_alloc(V, (size_t)n, sizeof *next);
    char *state = gj_vec_alloc(V, (size_t)n, 1);   /* 1 on the path, 2 done */
    if (!stack || !next || !state)
        return gj_vec_reject(V, "out of memory");
    stack[top++] = 0;
    state[0] = 1;
    *nretreat = 0;
    while (top) {
        int u = stack[top - 1];
        if (next[u] < gj_vec_nsucc(V, u)) {
            int v = gj_vec_succ(V, u, next[u]++);
            if (state[v] == 1) {
                retreat[2 * *nretreat] = u;
                retreat[2 * (*nretreat)++ + 1] = v;
            } else if (!state[v]) {
                state[v] = 1;
                seen++;
                stack[top++] = v;
            }
        } else {
            state[u] = 2;
            rpo[u] = --done;
            top--;
        }
    }
    return seen == n ? 1 : gj_vec_reject(V, "unreachable block");
}

/* Immediate dominators (Cooper, Harvey and Kennedy's iteration over the
   reverse postorder); idom[0] = 0. */
static int dominators(GjVec *V, const int *rpo, int *idom) {
    int n = V->nblocks, *by_rpo = gj_vec_alloc(V, (size_t)n, sizeof *by_rpo);
    if (!by_rpo)
        return gj_vec_reject(V, "out of memory");
    for (int u = 0; u < n; u++) {
        by_rpo[rpo[u]] = u;
        idom[u] = -1;
    }
    idom[0] = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int r = 1; r < n; r++) {
            int u = by_rpo[r], d = -1;
            for (int k = 0; k < V->npred[u]; k++) {
                int p = V->pred[u][k];
                if (idom[p] < 0)
                    continue;
                if (d < 0) {
                    d = p;
                    continue;
                }
                int a = p;
                while (a != d) {
                    while (rpo[a] > rpo[d])
                        a = idom[a];
                    while (rpo[d] > rpo[a])
                        d = idom[d];
                }
            }
            if (d != idom[u]) {
                idom[u] = d;
                changed = 1;
            }
        }
    }
    return 1;
}

static int dominates(const int *idom, int a, int b) {
    while (b != a && b != 0)
        b = idom[b];
    return b == a;
}

/* Adds the natural loop of back edge latch -> h (h dominates latch): the
   blocks that reach latch without passing h, to the loop of header h. */
static void loop_body(GjVec *V, int latch, int h, char *in, int *work) {
    int top = 0;
    in[h] = 1;
    if (!in[latch]) {
        in[latch] = 1;
        work[top++] = latch;
    }
    while (top) {
        int u = work[--top];
        for (int k = 0; k < V->npred[u]; k++) {
            int p = V->pred[u][k];
            if (!in[p]) {
                in[p] = 1;
                work[top++] = p;
            }
        }
    }
}

/* The loops (one per header, the back edges' natural loops merged), sorted
   innermost first, their nesting, and each block's innermost loop.  A
   retreating edge whose target does not dominate its source is a second
   way into a cycle: irreducible, which the masks below cannot express. */
static int find_loops(GjVec *V) {
    int n = V->nblocks, nretreat = 0;
    int *rpo = gj_vec_alloc(V, (size_t)n, sizeof *rpo),
        *idom = gj_vec_alloc(V, (size_t)n, sizeof *idom);
    int *retreat = gj_vec_alloc(V, 4 * (size_t)n, sizeof *retreat);
    int *work = gj_vec_alloc(V, (size_t)n, sizeof *work),
        *size = gj_vec_alloc(V, (size_t)n, sizeof *size);
    V->loops = gj_vec_alloc(V, (size_t)n, sizeof *V->loops);
    V->loop = gj_vec_alloc(V, (size_t)n, sizeof *V->loop);
    if (!rpo || !idom || !retreat || !work || !size || !V->loops || !V->loop)
        return gj_vec_reject(V, "out of memory");
    if (!depth_first(V, rpo, retreat, &nretreat) || !dominators(V, rpo, idom))
        return 0;
    for (int e = 0; e < nretreat; e++) {
        int u = retreat[2 * e], h = retreat[2 * e + 1], l = 0;
        if (!dominates(idom, h, u))
            return gj_vec_reject(V, "irreducible control flow");
        while (l < V->nloops && V->loops[l].header != h)
            l++;
        if (l == V->nloops) {
            V->loops[V->nloops++] =
                (GjVecLoop){.header = h, .parent = -1, .in = gj_vec_alloc(V, (size_t)n, 1)};
            if (!V->loops[l].in)
                return gj_vec_reject(V, "out of memory");
        }
        loop_body(V, u, h, V->loops[l].in, work);
    }
    for (int l = 0; l < V->nloops; l++)
        for (int u = 0; u < n; u++)
            size[l] += V->loops[l].in[u];
    for (int l = 0; l < V->nloops; l++)   /* innermost (smallest) first */
        for (int k = l + 1; k < V->nloops; k++)
            if (size[k] < size[l]) {
                GjVecLoop t = V->loops[l];
                int st = size[l];
                V->loops[l] = V->loops[k], size[l] = size[k];
                V->loops[k] = t, size[k] = st;
            }
    for (int u = 0; u < n; u++) {
        V->loop[u] = -1;
        for (int l = V->nloops - 1; l >= 0; l--)
            if (V->loops[l].in[u])
                V->loop[u] = l;
    }
    for (int l = V->nloops - 1; l >= 0; l--) {
        for (int k = l + 1; k < V->nloops && V->loops[l].parent < 0; k++)
            if (V->loops[k].in[V->loops[l].header])
                V->loops[l].parent = k;
        int p = V->loops[l].parent;
        V->loops[l].depth = p < 0 ? 1 : V->loops[p].depth + 1;
    }
    return 1;
}

/* Block blk as a node of region (a loop, or -1 for the function): itself
   when its innermost loop is region, else the header of the loop in region
   that holds it; -1 when blk is outside region. */
static int lift(const GjVec *V, int region, int blk) {
    if (region >= 0 && !V->loops[region].in[blk])
        return -1;
    int l = V->loop[blk];
    if (l == region)
        return blk;
    while (V->loops[l].parent != region)
        l = V->loops[l].parent;
    return V->loops[l].header;
}

/* Depth-first over region's nodes (back edges to its header left out),
   appending each node to post after its successors. */
static void region_visit(const GjVec *V, int region, int node, int *seen, int *post, int *npost) {
    seen[node] = region + 2;
    int sub = V->loop[node] == region ? -1 : V->loop[node];
    for (int u = 0; u < V->nblocks; u++) {
        if (sub < 0 ? u != node : !V->loops[sub].in[u])
            continue;
        for (unsigned s = 0; s < gj_vec_nsucc(V, u); s++) {
            int m = lift(V, region, gj_vec_succ(V, u, s));
            if (m < 0 || m == node || (region >= 0 && m == V->loops[region].header))
                continue;
            if (seen[m] != region + 2)
                region_visit(V, region, m, seen, post, npost);
        }
    }
    post[(*npost)++] = node;
}

/* Appends region's blocks to the order, topologically with each loop's
   blocks together (a loop is one node of the region around it). */
static int region_order(GjVec *V, int region, int *seen) {
    int *post = gj_vec_alloc(V, (size_t)V->nblocks, sizeof *post), npost = 0;
    if (!post)
        return gj_vec_reject(V, "out of memory");
    region_visit(V, region, region < 0 ? 0 : V->loops[region].header, seen, post, &npost);
    for (int i = npost - 1; i >= 0; i--) {
        int node = post[i];
        if (V->loop[node] == region)
            V->order[V->norder++] = node;
        else if (!region_order(V, V->loop[node], seen))
            return 0;
    }
    return 1;
}

/* The linear order, checked: every edge but a loop's back edges goes
   forward, and each loop's blocks are consecutive. */
static int linear_order(GjVec *V) {
    int n = V->nblocks, *seen = gj_vec_alloc(V, (size_t)n, sizeof *seen);
    V->order = gj_vec_alloc(V, (size_t)n, sizeof *V->order);
    V->pos = gj_vec_alloc(V, (size_t)n, sizeof *V->pos);
    if (!seen || !V->order || !V->pos)
        return gj_vec_reject(V, "out of memory");
    for (int u = 0; u < n; u++)
        seen[u] = -10;
    if (!region_order(V, -1, seen))
        return 0;
    if (V->norder != n)
        return gj_vec_reject(V, "blocks outside the order");
    for (int i = 0; i < n; i++)
        V->pos[V->order[i]] = i;
    for (int u = 0; u < n; u++)
        for (unsigned s = 0; s < gj_vec_nsucc(V, u); s++) {
            int v = gj_vec_succ(V, u, s), l = V->loop[v];
            int back = l >= 0 && V->loops[l].header == v && V->loops[l].in[u];
            if (!back && V->pos[v] <= V->pos[u])
                return gj_vec_reject(V, "no topological order");
        }
    for (int l = 0; l < V->nloops; l++) {
        GjVecLoop *L = &V->loops[l];
        int count = 0;
        L->first = V->pos[L->header];
        L->last = L->first;
        for (int u = 0; u < n; u++)
            if (L->in[u]) {
                count++;
                if (V->pos[u] < L->first)
                    return gj_vec_reject(V, "loop header not first");
                L->last = V->pos[u] > L->last ? V->pos[u] : L->last;
            }
        if (L->last - L->first + 1 != count)
            return gj_vec_reject(V, "loop not contiguous");
    }
    return 1;
}

unsigned gj_vec_count_phis(LLVMBasicBlockRef bb) {
    unsigned n = 0;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && LLVMIsAPHINode(i);
         i = LLVMGetNextInstruction(i))
        n++;
    return n;
}

/* The edges that leave loops, each with the loops it leaves. */
static int find_exits(GjVec *V) {
    V->exits = gj_vec_alloc(V, 2 * (size_t)V->nblocks, sizeof *V->exits);
    if (!V->exits)
        return gj_vec_reject(V, "out of memory");
    for (int u = 0; u < V->nblocks; u++)
        for (unsigned s = 0; s < gj_vec_nsucc(V, u); s++) {
            int v = gj_vec_succ(V, u, s), n = 0;
            if (s == 1 && gj_vec_succ(V, u, 0) == v)
                continue;
            for (int l = V->loop[u]; l >= 0 && !V->loops[l].in[v]; l = V->loops[l].parent)
                n++;
            if (!n)
                continue;
            GjVecExit *e = &V->exits[V->nexits++];
            *e = (GjVecExit){
                .from = u, .to = v, .nlevels = n, .nvals = (int)gj_vec_count_phis(V->bb[v])};
            size_t nv = (size_t)n * (size_t)e->nvals;
            e->chain = gj_vec_alloc(V, (size_t)n, sizeof *e->chain);
            e->acc = gj_vec_alloc(V, (size_t)n, sizeof *e->acc);
            e->upd = gj_vec_alloc(V, (size_t)n, sizeof *e->upd);
            e->keep = gj_vec_alloc(V, nv, sizeof *e->keep);
            e->kupd = gj_vec_alloc(V, nv, sizeof *e->kupd);
            if (!e->chain || !e->acc || !e->upd || !e->keep || !e->kupd)
                return gj_vec_reject(V, "out of memory");
            n = 0;
            for (int l = V->loop[u]; l >= 0 && !V->loops[l].in[v]; l = V->loops[l].parent)
                e->chain[n++] = l;
        }
    return 1;
}

int gj_vec_plan(GjVec *V) {
    return index_blocks(V) && find_loops(V) && linear_order(V) && find_exits(V);
}

int gj_vec_has_cycle(GjVec *V) {
    int nretreat = 0;
    if (!index_blocks(V))
        return 0;
    int *rpo = gj_vec_alloc(V, (size_t)V->nblocks, sizeof *rpo);
    int *retreat = gj_vec_alloc(V, 4 * (size_t)V->nblocks, sizeof *retreat);
    if (!rpo || !retreat)
        return 0;
    depth_first(V, rpo, retreat, &nretreat);   /* an unreachable block does not matter here */
    return nretreat > 0;
}
