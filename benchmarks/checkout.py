# -*- coding: utf-8 -*-
# Copyright: ethercluster.routing contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by the benchmark scripts: the checkout's root, importing the
checkout as ``ansible_collections.ethercluster.routing`` (as conftest.py
does for the tests) through a symlink tree in ``.build/``, and the
command line every script shares (its summary, ``--json FILE``)."""

import argparse
import json
import os
import platform
import sys
import time

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


def benchmark_parser(doc, quick=None):
    """An argument parser described by the first paragraph of ``doc`` (the
    script's docstring), with ``--json FILE`` to write the measured rows
    and, when ``quick`` says what it leaves, ``--quick``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--json", metavar="FILE", help="write the measured rows to this file as JSON")
    if quick:
        parser.add_argument("--quick", action="store_true", help=quick)
    return parser


def write_rows(path, rows):
    """Write ``rows`` to ``path`` as JSON (nothing when ``path`` is None)."""
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=1)


def report(title, started, table_text, json_path, rows):
    """Print ``title`` with the machine and the seconds since ``started``,
    then the markdown table; write ``rows`` to ``json_path`` (if any)."""
    seconds = time.perf_counter() - started
    print("%s (%s, Python %s), %.0f s\n" % (title, platform.machine(), platform.python_version(), seconds))
    print(table_text)
    write_rows(json_path, rows)


def start(doc, argv, quick=None):
    """``(arguments, start time)``: :func:`benchmark_parser` read from ``argv``."""
    return benchmark_parser(doc, quick).parse_args(argv), time.perf_counter()
