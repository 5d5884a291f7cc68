"""The error hierarchy. It lives at the bottom of the import order so every layer can raise it."""


class ShopgenError(ValueError):
    """Base of every error shopgen raises on purpose.

    The CLI prints its message as one line and exits non-zero; anything else escaping
    a command is a bug.
    """


class ConfigError(ShopgenError):
    """A value given by a user or a data file is out of its allowed range."""


class DatasetError(ShopgenError):
    """A dataset directory is missing, incomplete, corrupted or of the wrong kind."""
