"""Make the checkout importable as ``ansible_collections.ethercluster.routing``.

Ansible loads collection code under that package name, so the tests do too:
a symlink tree in ``.build/`` points at this checkout.
"""

import os
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(ROOT, ".build")
LINK = os.path.join(BUILD, "ansible_collections", "ethercluster", "routing")

if not os.path.islink(LINK):
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    os.symlink(ROOT, LINK)
if BUILD not in sys.path:
    sys.path.insert(0, BUILD)
