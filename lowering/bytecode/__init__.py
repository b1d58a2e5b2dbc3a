"""CUDA Tile IR bytecode writer: our IR module in, `.tileirbc` bytes out.

Entry point: `lowering.bytecode.writer.write_bytecode`.
"""
