"""The cutile.compile.v1 protocol: `.proto` sources and their generated Python code."""
