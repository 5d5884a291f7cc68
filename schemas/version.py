"""The installed shopgen version, readable from the lowest layer."""

from importlib.metadata import PackageNotFoundError, version

try:
    SHOPGEN_VERSION = version("shopgen")
except PackageNotFoundError:  # running from a source tree that was never installed
    SHOPGEN_VERSION = "0+unknown"
