"""shopgen: synthetic e-commerce worlds and verifiable shopping-agent tasks for RL."""

from shopgen.schemas.version import SHOPGEN_VERSION as __version__

__all__ = ["__version__"]
