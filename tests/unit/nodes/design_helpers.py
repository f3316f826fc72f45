"""Helpers shared by the design tests of the host-routed planners
(test_planes.py, test_stack.py): a design built from a kind's defaults, and
the error a planner raises for a design it refuses."""

import pytest


def design_of(defaults, **fields):
    """A new design: ``defaults`` with ``fields`` set over them."""
    design = dict(defaults)
    design.update(fields)
    return design


def raised(error, planner, design):
    """The ``error`` that ``planner(design)`` raises; the test fails when it raises none."""
    with pytest.raises(error) as caught:
        planner(design)
    return caught.value
