"""Write the shared launch-check vectors (tests/vectors/launch/*.json) from the Python planner.

Each file holds cases of one check family. A case is a launch contract (its deterministic
protobuf serialization as hex, `contract_pb`, and the same contract as proto JSON for
reading), argument descriptions, an optional host grid, and what `client_stubs.plan_launch`
did with them: accepted with the grid and the packed parameter buffer (hex), or the error's
class, parameter and message. Both hosts run every case (tests/client_stubs/
test_launch_vectors.py and client_stubs/rust/cutile-host/tests/launch_vectors.rs), so the
two cannot drift apart.

    python -m tests.vectors.make_launch_vectors           # rewrite the vectors
    python -m tests.vectors.make_launch_vectors --check   # exit 1 when they are stale

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
from tests.vectors import launch_cases
from tests.vectors.args import outcome

OUT = Path(__file__).resolve().parent / "launch"

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


def main(argv: Sequence[str]) -> int:
    check = "--check" in argv
    OUT.mkdir(parents=True, exist_ok=True)
    wanted = {f"{name}.json": render(cases) for name, cases in families().items()}
    stale = []
    for file, text in wanted.items():
        path = OUT / file
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(file)
        if not check:
            path.write_text(text, encoding="utf-8")
    extra = sorted(p.name for p in OUT.glob("*.json") if p.name not in wanted)
    for file in extra:
        stale.append(file)
        if not check:
            (OUT / file).unlink()
    if check and stale:
        print(f"stale launch vectors: {', '.join(stale)}; run python -m {__spec__.name}")
        return 1
    total = sum(len(c) for c in families().values())
    print(f"{total} cases in {len(wanted)} files" + (" (up to date)" if check else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
