"""The command-line tools: `cutile-compile` (batch compiles, bundles, stage dumps, SARIF,
remote compiles), `cutile-lsp` (editor checks) and the console-script entry points, which
import nothing beyond the standard library until a tool runs."""
