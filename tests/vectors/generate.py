"""Write the vectors both hosts run, from the Python client: the launch-check vectors
(tests/vectors/launch/*.json) and the artifact-layer vectors (tests/vectors/host/*.json:
request cache keys and sealed artifacts, see host_cases.py).

Each launch file holds cases of one check family. A case is a launch contract (its deterministic
protobuf serialization as hex, `contract_pb`, and the same contract as proto JSON for
reading), argument descriptions, an optional host grid, and what `client_stubs.plan_launch`
did with them: accepted with the grid and the packed parameter buffer (hex), or the error's
class, parameter and message. Both hosts run every case (tests/client_stubs/
test_launch_vectors.py and client_stubs/rust/cutile-host/tests/launch_vectors.rs), so the
two cannot drift apart.

    python -m tests.vectors.generate           # rewrite the vectors
    python -m tests.vectors.generate --check   # exit 1 when they are stale

Argument descriptions: tests/vectors/args.py.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.vectors import host_cases, launch_cases
from tests.vectors.args import outcome

ROOT = Path(__file__).resolve().parent
OUT = ROOT / "launch"
HOST = ROOT / "host"

Case = dict[str, Any]


def case(
    name: str,
    about: str,
    contract: pb.LaunchContract,
    args: list[dict[str, Any]],
    grid: list[int] | None = None,
) -> Case:
    return {
        "name": name,
        "about": about,
        "contract_pb": contract.SerializeToString(deterministic=True).hex(),
        "contract": json_format.MessageToDict(contract, preserving_proto_field_name=True),
        "args": args,
        "grid": grid,
        "expect": outcome(contract, args, grid),
    }


def families() -> dict[str, list[Case]]:
    """Every family of cases, by file name."""
    builders: dict[str, Callable[[Callable[..., Case]], list[Case]]] = launch_cases.FAMILIES
    return {name: build(case) for name, build in builders.items()}


def render(cases: list[Case]) -> str:
    return json.dumps({"cases": cases}, indent=1, sort_keys=False) + "\n"


def documents() -> dict[Path, str]:
    """Every vector file and its text."""
    files = {OUT / f"{name}.json": render(cases) for name, cases in families().items()}
    for name, doc in host_cases.families().items():
        files[HOST / f"{name}.json"] = json.dumps(doc, indent=1) + "\n"
    return files


def main(argv: Sequence[str]) -> int:
    check = "--check" in argv
    wanted = documents()
    stale = []
    for path, text in wanted.items():
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for folder in (OUT, HOST):
        for path in sorted(folder.glob("*.json")):
            if path not in wanted:
                stale.append(path)
                if not check:
                    path.unlink()
    if check and stale:
        names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
        print(f"stale vectors: {names}; run python -m tests.vectors.generate")
        return 1
    print(f"{len(wanted)} vector files" + (" (up to date)" if check else " written"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
