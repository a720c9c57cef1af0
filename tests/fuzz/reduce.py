"""Reducing a failing program to a small one that fails the same way.

Delta debugging over the program tree (gen.py), greedily, coarse edits
first: fewer threads (the first failing thread becomes the last one),
device functions dropped, statements deleted, a compound statement
replaced by the body of one of its clauses, `elif`/`else` clauses dropped,
then each expression replaced by a sub-expression of the same type or by
a constant 0 or 1 of its type.  An edit is kept when it makes the source
shorter (so reduction ends) and the program still fails with the same
Outcome.signature() (the same kind of failure, in the same output); an
edit that breaks the program (a name no longer defined, a `break` outside
a loop) fails differently and is undone.  Nodes marked
`keep` (indices kept in range, bounded loop counts) are never replaced
themselves, only their operands, so a reduced kernel stays well defined.
"""
import copy

from .gen import STRONG, N, constant


def _blocks(body):
    yield body
    for s in body:
        for c in s.clauses:
            if c.body is not None:
                yield from _blocks(c.body)


def _all_blocks(p):
    for f in p.funcs + [p.kernel]:
        yield from _blocks(f.body)


def _nodes(kids):
    for j, n in enumerate(kids):
        yield kids, j, n
        yield from _nodes(n.kids)


def _setter(seq, j, value):
    def do():
        seq[j] = value
    return do


def _edits(p, output):
    """Candidate edits of p, each a pair of functions (do, undo); the thread
    guard and the stores of output (the one that differs) stay."""
    for j in reversed(range(len(p.funcs))):
        f = p.funcs[j]
        yield (lambda j=j: p.funcs.pop(j)), (lambda j=j, f=f: p.funcs.insert(j, f))
    for body in list(_all_blocks(p)):
        for j in reversed(range(len(body))):
            s = body[j]
            if s.tag == "guard" or s.tag == ("store", output) or \
                    isinstance(s.tag, tuple) and len(p.checked_outputs()) == 1:
                continue
            yield (lambda b=body, j=j: b.pop(j)), (lambda b=body, j=j, s=s: b.insert(j, s))
            for c in s.clauses:
                if c.body is not None:
                    yield ((lambda b=body, j=j, c=c: b.__setitem__(slice(j, j + 1), c.body)),
                           (lambda b=body, j=j, c=c, s=s:
                            b.__setitem__(slice(j, j + len(c.body)), [s])))
            for k in reversed(range(1, len(s.clauses))):
                c = s.clauses[k]
                if c.fmt.startswith(("elif", "else")):
                    yield ((lambda s=s, k=k: s.clauses.pop(k)),
                           (lambda s=s, k=k, c=c: s.clauses.insert(k, c)))
    for body in list(_all_blocks(p)):
        for s in body:
            for c in s.clauses:
                for kids, j, n in list(_nodes(c.kids)):
                    if n.keep:
                        continue
                    options = [k for k in n.kids if k.t == n.t]
                    if n.t in STRONG:
                        options += [constant(n.t, 0), constant(n.t, 1)]
                    elif n.t in ("cond", "pybool"):
                        options += [N("True", t=n.t), N("False", t=n.t)]
                    for new in options:
                        yield _setter(kids, j, new), _setter(kids, j, n)


def _fewer_threads(p, outcome):
    """p with the threads after the first failing one dropped."""
    threads = outcome.detail.get("threads")
    if threads is None or not len(threads):
        return None
    q = copy.deepcopy(p)
    q.nthreads = int(threads[0]) + 1
    q.griddim = -(-q.nthreads // q.blockdim)
    q.outputs = [(name, dt, (q.nthreads,) + shape[1:], tol) for name, dt, shape, tol in q.outputs]
    return q


def reduce(program, outcome, check, budget=4000):
    """A smaller copy of program that check (program -> Outcome) still finds
    failing as `outcome`; the number of checks it took."""
    want = outcome.signature()
    tried = 0

    def fails(q):
        nonlocal tried
        tried += 1
        return check(q).signature() == want

    p = copy.deepcopy(program)
    fewer = _fewer_threads(p, outcome)
    if fewer is not None and fewer.nthreads < p.nthreads and fails(fewer):
        p = fewer
    rejected = set()                # sources that did not fail so: not checked again
    sweep_changed, start = True, 0
    while (sweep_changed or start) and tried < budget:
        # One sweep over the edits; after an accepted one the edits are made
        # anew for the new tree (the old ones point into the old one) and the
        # sweep goes on from the same place in their order.
        if not start:
            sweep_changed = False
        current, position, accepted = p.source(), 0, False
        for do, undo in _edits(p, outcome.output):
            position += 1
            if position <= start:
                continue
            if tried >= budget:
                break
            do()
            src = p.source()
            if len(src) >= len(current) or src in rejected:   # only ever shorter: no cycles
                undo()
                continue
            if fails(p):
                sweep_changed = accepted = True
                break
            undo()
            rejected.add(src)
        start = position - 1 if accepted else 0
    return p, tried
