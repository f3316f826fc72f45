"""The planning code's layout: one package per pipeline stage, and no stage
imports a later one (docs/development.md, "plugins/module_utils, by
pipeline stage"). Imports are read from the source, not executed."""

import ast
from pathlib import Path

import pytest

MODULE_UTILS = Path(__file__).resolve().parents[2] / "plugins" / "module_utils"
ORDER = ["errors", "fabric", "routing", "verify", "assign", "intent", "platforms", "report", "power", "nodes", "lab"]
# (importing stage, imported module): reasons in docs/development.md
ALLOWED_EARLIER = {
    # the capability table is standard library only; VLAN and MAC limits
    # are checked against it before anything is rendered
    ("assign", "platforms.capabilities"),
    ("intent", "platforms.capabilities"),
    # fabric validation picks each platform's interface-name rule
    ("fabric", "platforms.capabilities"),
}


def stage_of(dotted):
    return dotted.split(".")[0]


def imports_of(path):
    """Dotted module_utils modules a file imports (relative imports resolved)."""
    rel = path.relative_to(MODULE_UTILS).with_suffix("")
    package = list(rel.parts[:-1]) if rel.name != "__init__" else list(rel.parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
            target = ".".join(base + ([node.module] if node.module else []))
            if node.module is None:
                found.extend(".".join(filter(None, [target, alias.name])) for alias in node.names)
            else:
                found.append(target)
    return found


FILES = sorted(p for p in MODULE_UTILS.rglob("*.py"))


def test_every_file_sits_in_a_stage_package():
    loose = [p.name for p in MODULE_UTILS.glob("*.py") if p.stem not in ("errors", "__init__")]
    assert loose == []
    assert {p.name for p in MODULE_UTILS.iterdir() if p.is_dir() and not p.name.startswith("__")} \
        == set(ORDER) - {"errors"}


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(MODULE_UTILS)) for p in FILES])
def test_no_stage_imports_a_later_one(path):
    own = stage_of(str(path.relative_to(MODULE_UTILS).with_suffix("")).replace("/", "."))
    later = []
    for target in imports_of(path):
        if not target:
            continue
        stage = stage_of(target)
        if stage not in ORDER or ORDER.index(stage) <= ORDER.index(own):
            continue
        if (own, ".".join(target.split(".")[:2])) in ALLOWED_EARLIER:
            continue
        later.append(target)
    assert later == [], "%s (stage %s) imports later stages: %s" % (path.relative_to(MODULE_UTILS), own, later)


def _public_functions(path):
    """(name, node) of the module's public functions and public methods of public classes."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        members = [node]
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            members = [item for item in node.body if isinstance(item, ast.FunctionDef)]
        for item in members:
            if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                yield "%s.%s" % (node.name, item.name) if item is not node else item.name, item


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(MODULE_UTILS)) for p in FILES])
def test_public_functions_carry_type_hints(path):
    # mypy (scripts/test, step types) checks what the hints say; this checks they are there
    bare = []
    for name, node in _public_functions(path):
        arguments = [a for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                     if a.arg not in ("self", "cls")]
        if node.returns is None or any(a.annotation is None for a in arguments):
            bare.append(name)
    assert bare == []


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(MODULE_UTILS)) for p in FILES])
def test_no_function_is_longer_than_60_lines(path):
    long = ["%s (%d lines)" % (node.name, node.end_lineno - node.lineno + 1)
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60]
    assert long == []
