"""Customers: names, US addresses, membership tiers, signup dates and preference profiles.

Faker only builds the vocabularies (first/last names, streets, city-state-zip triples) once per
seed; every per-user choice is a NumPy draw from the block stream ``("users", block)``, so user
*i* is the same whatever the number of users, shards or workers (DESIGN §4).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache

import numpy as np
import polars as pl
from faker import Faker

from shopgen.gen.seeding import FeistelIds, stable_hash, stream

#: Users per random block (same scheme as products).
USER_BLOCK = 4096
#: Membership shares: most shoppers have none; paid Premium is a minority (US retail surveys).
TIERS = ("none", "basic", "premium")
TIER_SHARES = (0.55, 0.30, 0.15)
_EMAIL_DOMAINS = ("gmail.com", "yahoo.com", "outlook.com", "icloud.com", "aol.com", "proton.me")


@dataclass(frozen=True)
class UserVocab:
    """Words users are assembled from; built once per seed."""

    first: np.ndarray
    last: np.ndarray
    streets: np.ndarray
    city: np.ndarray
    state: np.ndarray
    zip: np.ndarray


@lru_cache(maxsize=4)
def user_vocab(seed: int) -> UserVocab:
    """The name and address vocabularies of ``seed`` (Faker seeded by a stable hash)."""
    fake = Faker("en_US")
    fake.seed_instance(stable_hash(seed, "user-vocab"))
    first = sorted({fake.first_name() for _ in range(900)})
    last = sorted({fake.last_name() for _ in range(1200)})
    streets = sorted({fake.street_name() for _ in range(800)})
    places = []
    for _ in range(700):
        state = fake.state_abbr(include_territories=False)
        places.append((fake.city(), state, fake.zipcode_in_state(state)))
    places.sort()
    return UserVocab(
        first=np.array(first),
        last=np.array(last),
        streets=np.array(streets),
        city=np.array([p[0] for p in places]),
        state=np.array([p[1] for p in places]),
        zip=np.array([p[2] for p in places]),
    )


def user_ids(seed: int, rows: np.ndarray) -> pl.Series:
    """Opaque user ids (``U`` + 8 base-36 characters)."""
    return FeistelIds(seed, "user", prefix="U", width=8).ids(rows)


@dataclass(frozen=True)
class UserDraws:
    """Per-user numbers a block's orders and visits also need."""

    rows: np.ndarray
    tier: np.ndarray  # index into TIERS
    signup: np.ndarray  # datetime64[s]
    fav_dept: np.ndarray  # (n, 2) department codes
    speed: np.ndarray  # preference weight on shipping speed
    activity: np.ndarray  # relative order rate
    state: np.ndarray  # two-letter codes


def _draw_users(
    seed: int, start: int, stop: int, *, today: date, departments: tuple[str, ...]
) -> tuple[UserDraws, dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The per-user random values of rows ``[start, stop)``, block by block."""
    parts: list[dict[str, np.ndarray]] = []
    vocab = user_vocab(seed)
    n_dept = len(departments)
    for block in range(start // USER_BLOCK, (stop - 1) // USER_BLOCK + 1):
        rng = stream(seed, "users", block)
        # The order of these draws is part of the data format.
        cols = {
            "name": rng.random((USER_BLOCK, 2)),
            "street": rng.random((USER_BLOCK, 2)),
            "place": rng.random(USER_BLOCK),
            "tier": rng.random(USER_BLOCK),
            "signup_days": np.exp(rng.normal(6.3, 1.0, USER_BLOCK)),
            "weights": rng.gamma(2.0, 1.0, (USER_BLOCK, 4)),
            "dept": rng.random((USER_BLOCK, 2)),
            "brand": rng.random((USER_BLOCK, 2)),
            "activity": rng.gamma(2.0, 0.5, USER_BLOCK),
            "email": rng.integers(1, 1000, USER_BLOCK),
        }
        lo, hi = max(start - block * USER_BLOCK, 0), min(stop - block * USER_BLOCK, USER_BLOCK)
        parts.append({k: v[lo:hi] for k, v in cols.items()})
    d = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    first_dept = (d["dept"][:, 0] * n_dept).astype(np.intp)
    other = (first_dept + 1 + (d["dept"][:, 1] * max(n_dept - 1, 1)).astype(np.intp)) % n_dept
    clock = np.datetime64(today, "s") + np.timedelta64(1, "D")
    signup = clock - (np.minimum(d["signup_days"], 3650) * 86400 + 3600).astype("timedelta64[s]")
    tier = np.searchsorted(np.cumsum(TIER_SHARES), d["tier"], side="right").clip(max=2)
    weights = d["weights"] / d["weights"].sum(axis=1, keepdims=True)
    place = (d["place"] * len(vocab.city)).astype(np.intp)
    draws = UserDraws(
        rows=np.arange(start, stop, dtype=np.int64),
        tier=tier,
        signup=signup,
        fav_dept=np.column_stack([first_dept, other]),
        speed=weights[:, 2],
        activity=d["activity"],
        state=vocab.state[place],
    )
    return draws, d, place, weights


def users_frame(
    seed: int,
    start: int,
    stop: int,
    *,
    today: date,
    departments: tuple[str, ...],
    brand_pools: dict[str, tuple[str, ...]],
) -> tuple[pl.DataFrame, UserDraws]:
    """The users table rows ``[start, stop)`` and the draws their orders build on."""
    draws, d, place, weights = _draw_users(seed, start, stop, today=today, departments=departments)
    vocab = user_vocab(seed)
    first = vocab.first[(d["name"][:, 0] * len(vocab.first)).astype(np.intp)]
    last = vocab.last[(d["name"][:, 1] * len(vocab.last)).astype(np.intp)]
    street = vocab.streets[(d["street"][:, 0] * len(vocab.streets)).astype(np.intp)]
    number = (10 + d["street"][:, 1] * 9990).astype(np.int64)
    domain = np.array(_EMAIL_DOMAINS)[d["email"] % len(_EMAIL_DOMAINS)]
    depts = np.array(departments)
    fav = depts[draws.fav_dept]
    brands = np.empty((len(first), 2), dtype=object)
    for j in range(2):
        for code, dept in enumerate(departments):
            sel = draws.fav_dept[:, j] == code
            if sel.any():
                pool = np.array(brand_pools[dept])
                brands[sel, j] = pool[(d["brand"][sel, j] * len(pool)).astype(np.intp)]
    w = np.round(weights, 2)
    frame = pl.DataFrame(
        {
            "user_id": user_ids(seed, draws.rows),
            "first": first,
            "last": last,
            "street": pl.Series(number).cast(pl.String) + " " + pl.Series(street),
            "city": vocab.city[place],
            "state": draws.state,
            "zip": vocab.zip[place],
            "tier": np.array(TIERS)[draws.tier],
            "signup_date": draws.signup.astype("datetime64[D]"),
            "d1": fav[:, 0],
            "d2": fav[:, 1],
            "b1": brands[:, 0].astype(str),
            "b2": brands[:, 1].astype(str),
            "w0": w[:, 0],
            "w1": w[:, 1],
            "w2": w[:, 2],
            "w3": w[:, 3],
            "digits": d["email"],
            "domain": domain,
        }
    )
    frame = frame.select(
        "user_id",
        pl.concat_str("first", pl.lit(" "), "last").alias("name"),
        pl.concat_str(
            pl.col("first").str.to_lowercase(),
            pl.lit("."),
            pl.col("last").str.to_lowercase().str.replace_all(r"[^a-z]", ""),
            pl.col("digits").cast(pl.String),
            pl.lit("@"),
            "domain",
        ).alias("email"),
        "street",
        "city",
        "state",
        "zip",
        "tier",
        "signup_date",
        pl.concat_str(
            pl.lit('{"price": '),
            pl.col("w0").cast(pl.String),
            pl.lit(', "rating": '),
            pl.col("w1").cast(pl.String),
            pl.lit(', "ship_speed": '),
            pl.col("w2").cast(pl.String),
            pl.lit(', "brand_loyalty": '),
            pl.col("w3").cast(pl.String),
            pl.lit(', "departments": ["'),
            "d1",
            pl.lit('", "'),
            "d2",
            pl.lit('"], "brands": ["'),
            pl.col("b1").str.replace_all('"', "'"),
            pl.lit('", "'),
            pl.col("b2").str.replace_all('"', "'"),
            pl.lit('"]}'),
        ).alias("preferences"),
    )
    return frame, draws


def clock_of(today: date) -> np.datetime64:
    """The end of the simulated ``today``: every event of the world happens before it."""
    return np.datetime64(datetime(today.year, today.month, today.day), "s") + np.timedelta64(1, "D")
