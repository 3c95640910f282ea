"""The written domain files of the adapt tests, a fixture for every test of this folder."""

from adapt_domain import domain  # noqa: F401
