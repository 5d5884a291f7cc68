"""The manifest every shopgen dataset carries (DESIGN §10)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

DatasetKind = Literal["catalog", "tasks", "export"]


def a_dataset(kind: str) -> str:
    """``kind`` as an error names it: "a catalog dataset", "an export dataset"."""
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind} dataset"


class FileEntry(BaseModel):
    """One data file of a dataset, with what a reader needs to trust it."""

    model_config = ConfigDict(extra="forbid")

    table: str = Field(description="the table (Hugging Face config) this file belongs to")
    rows: int = Field(ge=0, description="number of rows in the file")
    bytes: int = Field(ge=0, description="file size in bytes")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="hex SHA-256 of the file")


class Manifest(BaseModel):
    """What a dataset is, how it was made, and the checksums of its files."""

    model_config = ConfigDict(extra="forbid")

    kind: DatasetKind = Field(description="what the dataset holds")
    dataset_id: str = Field(description="short content hash: identifies this exact data")
    shopgen_version: str = Field(description="version of shopgen that wrote it")
    schema_version: int = Field(description="version of the table schemas")
    seed: int = Field(description="root seed of every random stream")
    config: dict[str, Any] = Field(description="the full configuration of the run")
    parents: list[str] = Field(
        default_factory=list, description="dataset_ids this one derives from"
    )
    files: dict[str, FileEntry] = Field(description="relative path → file entry")
    content_hash: str = Field(description="SHA-256 over the sorted files' paths and hashes")
    created_at: str = Field(description="wall-clock time of writing (the only wall-clock value)")
