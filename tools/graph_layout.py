"""A top-to-bottom layered layout of a directed acyclic graph, in pure Python.

The usual steps of a layered (Sugiyama) drawing, each in its simplest useful form:
1. ranks: the longest path from a source, so every edge points down;
2. dummy points where an edge crosses a rank, so long edges route between the boxes
   instead of through them;
3. order within a rank: barycentre sweeps, down then up, keeping the order with the
   fewest crossings seen;
4. x: each node pulled towards the mean x of its neighbours, then pushed apart to keep
   the order and a gap, averaging a left-to-right and a right-to-left sweep.
Enough for the few hundred nodes of a network's layer graph; no optimal crossing count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NODE_GAP = 40.0   # px between boxes in a rank
DUMMY_W = 14.0    # px an edge passing through a rank takes up
SWEEPS = 12


@dataclass
class Placed:
    x: float  # centre
    y: float  # top
    w: float
    h: float


@dataclass
class Layout:
    nodes: list[Placed]
    edges: list[list[tuple[float, float]]]  # per input edge: the points from the source's bottom to the target's top
    width: float
    height: float
    ranks: list[int] = field(default_factory=list)


def longest_path_ranks(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """Rank of each node: 0 for sources, else one more than its highest predecessor.
    Nodes on a cycle (never in a loaded net) are placed after what precedes them."""
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        preds[b].append(a)
        succs[a].append(b)
    indegree = [len(p) for p in preds]
    ready = [v for v in range(n) if indegree[v] == 0]
    rank = [0] * n
    done = [False] * n
    while ready:
        v = ready.pop()
        done[v] = True
        for s in succs[v]:
            rank[s] = max(rank[s], rank[v] + 1)
            indegree[s] -= 1
            if indegree[s] == 0:
                ready.append(s)
    for v in range(n):  # a cycle: below its placed predecessors
        if not done[v]:
            rank[v] = 1 + max((rank[p] for p in preds[v] if done[p]), default=-1)
    return rank


def layered_layout(sizes: list[tuple[float, float]], edges: list[tuple[int, int]],
                   rank_gap: float = 56.0) -> Layout:
    """Place nodes of the given (width, height) so that every edge (source, target) points down."""
    n = len(sizes)
    rank = longest_path_ranks(n, edges)
    # the chain of vertices of each edge: the source, one dummy per crossed rank, the target
    widths = [w for w, _ in sizes]
    vrank = list(rank)
    chains = []
    for a, b in edges:
        chain = [a]
        for r in range(rank[a] + 1, rank[b]):
            vrank.append(r)
            widths.append(DUMMY_W)
            chain.append(len(vrank) - 1)
        chains.append(chain + [b])
    total = len(vrank)
    up: list[list[int]] = [[] for _ in range(total)]
    down: list[list[int]] = [[] for _ in range(total)]
    for chain in chains:
        for u, v in zip(chain, chain[1:]):
            if vrank[v] > vrank[u]:
                down[u].append(v)
                up[v].append(u)
    levels: list[list[int]] = [[] for _ in range(max(vrank, default=-1) + 1)]
    for v in range(total):
        levels[vrank[v]].append(v)
    levels = _order(levels, up, down)
    xs = _x_positions(levels, widths, up, down)
    heights = [max((sizes[v][1] for v in level if v < n), default=0.0) for level in levels]
    tops, y = [], 0.0
    for h in heights:
        tops.append(y)
        y += h + rank_gap
    left = min((xs[v] - widths[v] / 2 for v in range(total)), default=0.0)
    nodes = [Placed(xs[v] - left, tops[vrank[v]] + (heights[vrank[v]] - sizes[v][1]) / 2, *sizes[v])
             for v in range(n)]
    paths = []
    for chain in chains:
        a, b = chain[0], chain[-1]
        points = [(nodes[a].x, nodes[a].y + nodes[a].h)]
        points += [(xs[d] - left, tops[vrank[d]] + heights[vrank[d]] / 2) for d in chain[1:-1]]
        paths.append(points + [(nodes[b].x, nodes[b].y)])
    width = max((xs[v] - left + widths[v] / 2 for v in range(total)), default=0.0)
    return Layout(nodes, paths, width, max(y - rank_gap, 0.0), rank)


def _crossings(levels: list[list[int]], down: list[list[int]]) -> int:
    count = 0
    for upper, lower in zip(levels, levels[1:]):
        pos = {v: i for i, v in enumerate(lower)}
        ends = [pos[t] for u in upper for t in sorted(down[u], key=pos.__getitem__)]
        # inversions among edge end positions, in upper order: the crossings between these two ranks
        count += sum(1 for i in range(len(ends)) for j in range(i + 1, len(ends)) if ends[j] < ends[i])
    return count


def _order(levels: list[list[int]], up: list[list[int]], down: list[list[int]]) -> list[list[int]]:
    """Barycentre sweeps; the ordering with the fewest crossings seen wins."""
    best, best_count = [list(level) for level in levels], _crossings(levels, down)
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        indexes = range(1, len(levels)) if downward else range(len(levels) - 2, -1, -1)
        for r in indexes:
            fixed = levels[r - 1] if downward else levels[r + 1]
            pos = {v: i for i, v in enumerate(fixed)}
            neighbours = up if downward else down

            def centre(v: int, r=r, pos=pos, neighbours=neighbours) -> float:
                linked = [pos[u] for u in neighbours[v] if u in pos]
                return sum(linked) / len(linked) if linked else levels[r].index(v)

            levels[r] = sorted(levels[r], key=centre)
        count = _crossings(levels, down)
        if count < best_count:
            best, best_count = [list(level) for level in levels], count
    return best


def _x_positions(levels, widths, up, down) -> list[float]:
    xs = [0.0] * len(widths)
    for level in levels:  # a start: packed left to right
        x = 0.0
        for v in level:
            xs[v] = x + widths[v] / 2
            x += widths[v] + NODE_GAP
    for sweep in range(8):
        downward = sweep % 2 == 0
        for level in levels if downward else reversed(levels):
            wanted = []
            for v in level:
                linked = (up[v] if downward else down[v]) or (down[v] if downward else up[v])
                wanted.append(sum(xs[u] for u in linked) / len(linked) if linked else xs[v])
            for v, x in zip(level, _spread(level, wanted, widths)):
                xs[v] = x
    return xs


def _spread(level: list[int], wanted: list[float], widths: list[float]) -> list[float]:
    """Positions as near `wanted` as the order and the gaps allow: the mean of a sweep that
    pushes right and one that pushes left."""
    def gap(i: int) -> float:
        return (widths[level[i - 1]] + widths[level[i]]) / 2 + NODE_GAP

    right = list(wanted)
    for i in range(1, len(level)):
        right[i] = max(right[i], right[i - 1] + gap(i))
    left = list(wanted)
    for i in range(len(level) - 2, -1, -1):
        left[i] = min(left[i], left[i + 1] - gap(i + 1))
    mean = [(a + b) / 2 for a, b in zip(right, left)]
    for i in range(1, len(level)):  # the mean keeps the order; restore the gaps it may have narrowed
        mean[i] = max(mean[i], mean[i - 1] + gap(i))
    return mean
