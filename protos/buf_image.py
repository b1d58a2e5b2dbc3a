"""Build buf inputs: protoc images of `cutile/compile/v1`, now or at a git revision.

buf cannot resolve `google/rpc/status.proto` without the BSR, so `buf lint` and
`buf breaking` run on FileDescriptorSet images that protoc (grpc_tools) builds with the
imports included; `--path cutile/compile/v1` keeps buf to our own files.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from protos.regenerate import PROTO_ROOT, import_dirs

PACKAGE_DIR = Path("cutile") / "compile" / "v1"
CONFIG = PROTO_ROOT / "buf.yaml"


def build_image(proto_root: Path, out: Path) -> Path:
    """An image of every `.proto` in `proto_root/cutile/compile/v1`, written to `out`."""
    from grpc_tools import protoc

    files = sorted(
        str(p.relative_to(proto_root)) for p in (proto_root / PACKAGE_DIR).glob("*.proto")
    )
    args = [
        "protoc",
        f"-I{proto_root}",
        *(f"-I{folder}" for folder in import_dirs()),
        "--include_imports",
        "--include_source_info",
        f"--descriptor_set_out={out}",
        *files,
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc could not build an image of {proto_root}")
    return out


def checkout_protos(revision: str, into: Path) -> Path | None:
    """The protos of `revision` copied under `into`; None when it has none."""
    repo = PROTO_ROOT.parent
    listing = subprocess.run(
        ["git", "ls-tree", "--name-only", revision, f"protos/{PACKAGE_DIR.as_posix()}/"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    names = [n for n in listing.stdout.split() if n.endswith(".proto")]
    if listing.returncode != 0 or not names:
        return None
    for name in names:
        text = subprocess.run(
            ["git", "show", f"{revision}:{name}"], cwd=repo, capture_output=True, check=True
        ).stdout
        target = into / Path(name).relative_to("protos")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text)
    return into
