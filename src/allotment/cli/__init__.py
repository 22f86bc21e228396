"""The thin command-line layer: parse, call, render, map errors to exit codes."""
