# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by the benchmark scripts: the checkout's root, and importing the
checkout as ``ansible_collections.ethercluster.routing`` (as conftest.py
does for the tests) through a symlink tree in ``.build/``."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_importable():
    """Put ``.build/ansible_collections/ethercluster/routing`` -> checkout on
    sys.path (idempotent)."""
    build = os.path.join(ROOT, ".build")
    link = os.path.join(build, "ansible_collections", "ethercluster", "routing")
    if not os.path.islink(link) and not os.path.exists(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(ROOT, link)
    if build not in sys.path:
        sys.path.insert(0, build)
