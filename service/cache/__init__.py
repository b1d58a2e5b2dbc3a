"""The artifact cache: request keys, the stores (memory, disk, Redis, layered), cubins by
content, repeated hits as wire bytes, and the keeper of the compile lease."""
