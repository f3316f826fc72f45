# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Interface selection of the Stack-Ring (the paper's Fig. 5) and the
Stack-Mesh (Fig. 7, dimension order: X, then Y), as printed and as fixed.

Everything here works on stage/group coordinates and SSB indices; the plan
(:mod:`stack`) turns a selected direction into a route. An SSB index is the
stage (or column/row) whose East (North) NICs sit on it: SSB ``a`` joins
stage ``a``'s East side with stage ``a + 1``'s West side.
"""

from __future__ import annotations


def ring_interface(source: int, target: int, stages: int) -> str:
    """Fig. 5 (section 3.3) as printed: ``east`` or ``west`` for a node of
    stage ``source`` towards SSB (subnet) ``target`` of an ``stages``-stage
    ring. S_t/2 is taken exactly (2 X compared with S_t); integer halving
    gives the same choices (tests/unit/nodes/test_stack_select.py checks
    both against the shortest way for S_t up to 64)."""
    if 2 * source <= stages:
        if source <= target and 2 * source + stages > 2 * target:
            return "east"
        return "west"
    if source > target and 2 * source - stages <= 2 * target:
        return "west"
    return "east"


def fig7_step(source: int, target: int, size: int, fixed: bool = True) -> str | None:
    """One step of Fig. 7 (section 3.4) towards *group* coordinate
    ``target`` along a dimension of ``size`` groups: ``plus`` (E or N),
    ``minus`` (W or S), or None when already there.

    As printed, Step 2 (Y) selects N in both branches and compares with
    N/2 (the X size). ``fixed=False`` reproduces the printed Y step (used
    by the tests to show the loop it makes); the fix selects the minus
    direction when the target is below and near, as Step 1 does for X, and
    each dimension compares with its own size."""
    if source == target:
        return None
    if source < target:
        return "plus" if 2 * (target - source) < size else "minus"
    if 2 * (source - target) < size:
        return "minus" if fixed else "plus"
    return "plus" if fixed else "minus"


def mesh_interface(group: tuple[int, int], ssb: tuple[int, int, int], sizes: tuple[int, int]) -> str | None:
    """The interface (``east``, ``west``, ``north``, ``south``) a node of
    ``group`` (i, j) uses towards SSB ``ssb`` = (axis, a, b): axis 0 is the
    x SSB joining groups (a, b) and (a+1, b), axis 1 the y SSB joining
    (a, b) and (a, b+1). None when the node is attached to it.

    Dimension order as in Fig. 7: X first, then Y. Towards an x SSB the X
    step is the ring's Fig. 5 along the row (the row of groups and x SSBs
    is a Stack-Ring); Fig. 7's own X step, taken towards the SSB's index,
    is one forward too long when N is even and X_s - X_d = N/2. Towards a
    y SSB the X step is Fig. 7's towards column a, then Fig. 5 along the
    column. See docs/stack.md, "Where the paper is fixed"."""
    (i, j), (width, height) = group, sizes
    axis, a, b = ssb
    if axis == 0:
        if i not in (a, (a + 1) % width):
            return ring_interface(i, a, width)
        step = fig7_step(j, b, height)
        return None if step is None else ("north" if step == "plus" else "south")
    step = fig7_step(i, a, width)
    if step is not None:
        return "east" if step == "plus" else "west"
    if j in (b, (b + 1) % height):
        return None
    return "north" if ring_interface(j, b, height) == "east" else "south"
