"""Test doubles that ship with the product: a fake clock, and (in submodules) a scripted model."""

from kairox.testing.clock import FakeClock

__all__ = ["FakeClock"]
