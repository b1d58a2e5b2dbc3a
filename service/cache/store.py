"""What every artifact store holds and offers: `CacheEntry` and the `ArtifactCache`
interface (`service.cache.disk`, `service.cache.redis`, `service.cache.layered`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class CacheEntry:
    """A successful compile: the cubin and the serialized `contract_pb2.LaunchContract`."""

    cubin: bytes
    contract: bytes


ErrorObserver = Callable[[str], None]  # called with the layer name on every I/O error


class ArtifactCache(Protocol):
    """A store of `CacheEntry`s by hex key; `layers` names its layers, fastest first."""

    layers: tuple[str, ...]

    def get(self, key: str) -> CacheEntry | None: ...

    def find(self, key: str) -> tuple[CacheEntry, str] | None:
        """The entry and the name of the layer that held it."""
        ...

    def put(self, key: str, entry: CacheEntry) -> bool: ...

    def delete(self, key: str) -> None: ...

    def contains(self, key: str) -> bool: ...

    def observe_errors(self, observer: ErrorObserver) -> None: ...
