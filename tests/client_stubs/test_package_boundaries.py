"""The client installs alone on a GPU host: no compiler imports, grpc/CUDA only when used."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import client_stubs

PACKAGE = Path(client_stubs.__file__).parent
FORBIDDEN = ("parser", "lowering", "service", "tree_sitter")


def test_import_pulls_in_neither_grpc_nor_cuda():
    code = (
        "import sys, client_stubs\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('grpc', 'cuda', 'parser', 'lowering', 'service', 'tree_sitter'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    root = PACKAGE.parent
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_module_imports_the_compiler():
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN, f"{path.name} imports {name}"


def test_public_names_resolve():
    for name in client_stubs.__all__:
        assert hasattr(client_stubs, name), name


def test_a_bundle_opens_and_loads_without_the_service_protos(tmp_path: Path):
    """A GPU host with only grpcio, protobuf, numpy and cuda-python has no googleapis
    protos (google.rpc): the bundle path must not need them (the service path does)."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[:2] == ['google', 'rpc']:\n"
        "            raise ImportError('no googleapis protos on this host')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import client_stubs\n"
        "from client_stubs.integrity import contract_bytes\n"
        "print(sorted(m for m in sys.modules if m.startswith('google.rpc')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PACKAGE.parent, capture_output=True, text=True
    )
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stderr
