"""The ``kairox`` command line. Thin: parse arguments, call the facade, render what it returns."""

from __future__ import annotations

from kairox.cli.main import cli, main

__all__ = ["cli", "main"]
