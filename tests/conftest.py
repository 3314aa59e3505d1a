"""Plugins every test folder may use (pytest reads `pytest_plugins` only from this top level)."""

pytest_plugins = ["pytester"]
