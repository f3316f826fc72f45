"""Interface selection of the Stack-Ring (Fig. 5) and the Stack-Mesh
(Fig. 7) (module_utils/nodes/stack_select.py, docs/stack.md "Where the
paper is fixed"): checked against breadth-first shortest ways on the SSB
graphs, built here independently of the selection code."""

from collections import deque

import pytest

from ansible_collections.ethercluster.routing.plugins.module_utils.nodes.stack_select import (
    fig7_step,
    mesh_interface,
    ring_interface,
)


def ring_forwards(stage, ssb, stages, choice):
    """Forwards from stage ``stage`` to SSB ``ssb`` going ``choice`` round:
    east reaches SSB a through stages stage+1 .. a, west through stage-1 .. a+1."""
    return (ssb - stage) % stages if choice == "east" else (stage - 1 - ssb) % stages


def fig5_integer(source, target, stages):
    """Fig. 5 with S_t/2 read as integer division (the C reading)."""
    half = stages // 2
    if source <= half:
        return "east" if source <= target < source + half else "west"
    return "west" if source - half <= target < source else "east"


@pytest.mark.parametrize("stages", range(2, 65))
def test_fig5_takes_the_shortest_way_for_every_ring_size(stages):
    for stage in range(stages):
        for ssb in range(stages):
            if ssb in (stage, (stage - 1) % stages):
                continue
            best = min(ring_forwards(stage, ssb, stages, way) for way in ("east", "west"))
            assert ring_forwards(stage, ssb, stages, ring_interface(stage, ssb, stages)) == best
            assert ring_forwards(stage, ssb, stages, fig5_integer(stage, ssb, stages)) == best


def test_fig5_gives_table1_choices_for_stage_1_of_4():
    # Table 1: from stage 1, network 10.10.2.0 leaves by E, 10.10.3.0 by W
    assert ring_interface(1, 2, 4) == "east"
    assert ring_interface(1, 3, 4) == "west"
    # section 3.3's example on the 5-stage ring: stage 1 uses W for stages 0 and 4, E for 2
    assert ring_interface(1, 4, 5) == "west"
    assert ring_interface(1, 2, 5) == "east"


def group_graph(width, height):
    """Groups of the k-ary 2-cube and, per SSB, the groups attached to it."""
    ssbs = {}
    for i in range(width):
        for j in range(height):
            ssbs[(0, i, j)] = {(i, j), ((i + 1) % width, j)}
            ssbs[(1, i, j)] = {(i, j), (i, (j + 1) % height)}
    return ssbs


def bfs(start, width, height):
    seen, queue = {start: 0}, deque([start])
    while queue:
        i, j = queue.popleft()
        for near in (((i + 1) % width, j), ((i - 1) % width, j), (i, (j + 1) % height), (i, (j - 1) % height)):
            if near not in seen:
                seen[near] = seen[(i, j)] + 1
                queue.append(near)
    return seen


MOVES = {"east": (1, 0), "west": (-1, 0), "north": (0, 1), "south": (0, -1)}


def follow(group, ssb, sizes, choose):
    """Groups a packet passes from ``group`` until one attached to ``ssb``
    (the forwards), following ``choose`` at each group; None on a loop."""
    width, height = sizes
    attached = group_graph(width, height)[ssb]
    steps, here = 0, group
    while here not in attached:
        nic = choose(here, ssb, sizes)
        here = ((here[0] + MOVES[nic][0]) % width, (here[1] + MOVES[nic][1]) % height)
        steps += 1
        if steps > width * height:
            return None
    return steps


@pytest.mark.parametrize("sizes", [(w, h) for w in range(2, 9) for h in range(2, 9)])
def test_mesh_selection_is_shortest_and_dimension_ordered(sizes):
    width, height = sizes
    ssbs = group_graph(width, height)
    for i in range(width):
        for j in range(height):
            distance = bfs((i, j), width, height)
            for ssb, attached in ssbs.items():
                nearest = min(distance[group] for group in attached)
                assert follow((i, j), ssb, sizes, mesh_interface) == nearest, ((i, j), ssb)
                nic = mesh_interface((i, j), ssb, sizes)
                assert (nic is None) == ((i, j) in attached)
                if nic in ("north", "south") and ssb[0] == 1:
                    assert i == ssb[1]  # X first: Y only once in the SSB's column


def printed_fig7(group, ssb, sizes):
    """Fig. 7 as printed, towards the SSB's index (a, b): X with N/2, then
    Y with N/2 and N in both Y branches."""
    width = sizes[0]
    step = fig7_step(group[0], ssb[1], width)
    if step is not None:
        return "east" if step == "plus" else "west"
    step = fig7_step(group[1], ssb[2], width, fixed=False)
    return "north" if step == "plus" else "south"


def test_printed_fig7_is_a_forward_too_long_on_even_rows():
    # 4 x 4 mesh, group (2, 1) towards the x SSB joining (0, 1) and (1, 1):
    # west reaches (1, 1) after one forward; Fig. 7's X step says E (X_s - X_d = N/2)
    assert printed_fig7((2, 1), (0, 0, 1), (4, 4)) == "east"
    assert follow((2, 1), (0, 0, 1), (4, 4), printed_fig7) == 2
    assert follow((2, 1), (0, 0, 1), (4, 4), mesh_interface) == 1


def test_printed_fig7_y_step_loops_and_the_fix_does_not():
    # Y_s > Y_d and near: the printed Step 2 selects N, away from the target
    assert fig7_step(3, 2, 6, fixed=False) == "plus"
    assert fig7_step(3, 2, 6) == "minus"
    # group (0, 3) towards the y SSB joining (0, 1) and (0, 2) of a 6 x 6 mesh:
    # printed, row 3 sends N (near, below), row 4 sends S (far, below): a loop
    assert printed_fig7((0, 3), (1, 0, 1), (6, 6)) == "north"
    assert printed_fig7((0, 4), (1, 0, 1), (6, 6)) == "south"
    assert follow((0, 3), (1, 0, 1), (6, 6), printed_fig7) is None
    assert follow((0, 3), (1, 0, 1), (6, 6), mesh_interface) == 1
