"""Loading the taxonomy data file shipped with shopgen (or a user's own)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from shopgen.schemas.errors import ConfigError
from shopgen.schemas.taxonomy import Taxonomy, parse_taxonomy

DEFAULT_TAXONOMY = "taxonomy.yaml"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """Read and validate a taxonomy file; the packaged one when ``path`` is None."""
    if path is None:
        return _packaged()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read taxonomy {path}: {exc.strerror}") from None
    return _parse(text, source=str(path))


@lru_cache(maxsize=1)
def _packaged() -> Taxonomy:
    text = resources.files("shopgen.gen").joinpath("data", DEFAULT_TAXONOMY).read_text("utf-8")
    return _parse(text, source=DEFAULT_TAXONOMY)


def _parse(text: str, *, source: str) -> Taxonomy:
    try:
        # libyaml's parser is ~10x faster than the pure-Python one, and every worker loads this.
        raw = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML: {exc}".splitlines()[0]) from None
    return parse_taxonomy(raw, source=source)
