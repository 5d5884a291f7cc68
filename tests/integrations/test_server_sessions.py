"""Server sessions: unique ids beyond the cap, no silent replacement, eviction order, close.

Driven in-process through FastAPI's TestClient (no socket): what is tested is the session
table and the HTTP status a trainer sees, not the transport.
"""

from __future__ import annotations

import dataclasses
import itertools
import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

import shopgen.server as server_module
from shopgen.env.tools.registry import REGISTRY
from shopgen.server import create_app

BYE = {"role": "assistant", "content": "Thanks, that is all."}


@pytest.fixture(scope="module")
def make(indexed_catalog_dir, tasks):
    """A fresh app (its own session table) with a given cap, over the shared fixture data."""

    def build(max_sessions: int) -> TestClient:
        return TestClient(create_app(indexed_catalog_dir, tasks=tasks, max_sessions=max_sessions))

    return build


def _reset(client: TestClient, **body) -> str:
    response = client.post("/reset", json=body)
    assert response.status_code == 200, response.text
    return response.json()["episode_id"]


def _state(client: TestClient, episode_id: str):
    return client.get("/state", params={"episode_id": episode_id})


def _step(client: TestClient, episode_id: str, message=BYE):
    return client.post("/step", json={"episode_id": episode_id, "action": {"message": message}})


def test_a_grpo_group_beyond_the_cap_gets_distinct_ids_and_isolated_episodes(make, tasks):
    client = make(2)
    tid = tasks[0].task_id
    ids = [_reset(client, task_id=tid, seed=7) for _ in range(4)]
    assert len(set(ids)) == 4, ids
    assert all(i.startswith(f"{tid}-") for i in ids)
    assert _step(client, ids[2]).json()["done"] is True
    assert _state(client, ids[2]).json()["turn"] == 1
    fourth = _state(client, ids[3]).json()
    assert (fourth["turn"], fourth["done"]) == (0, False)


def test_ids_are_unique_and_not_derivable_from_a_neighbours(make, tasks):
    """Ids were ``<task>-<server tag>-<counter>``: a client computed its neighbours' from its
    own, then read, stepped or closed their sessions."""
    a, b = make(8), make(8)
    tid = tasks[0].task_id
    ids = [_reset(a, task_id=tid) for _ in range(6)] + [_reset(b, task_id=tid)]
    assert len(set(ids)) == len(ids)
    for one, other in itertools.pairwise(ids):
        shared = next(i for i, (x, y) in enumerate(zip(one, other, strict=False)) if x != y)
        assert shared < len(tid) + 8, (one, other)  # a random token right after the task
        assert len(one.removeprefix(f"{tid}-")) >= 22  # 128 random bits


def test_a_drawn_id_that_a_session_holds_is_drawn_anew(make, tasks, monkeypatch):
    client = make(8)
    tid = tasks[0].task_id
    draws = iter(["same", "same", "other"])
    monkeypatch.setattr(server_module.secrets, "token_urlsafe", lambda n: next(draws))
    assert _reset(client, task_id=tid) == f"{tid}-same"
    assert _reset(client, task_id=tid) == f"{tid}-other"


def test_a_live_client_id_is_refused_with_409(make, tasks):
    client = make(8)
    tid = tasks[0].task_id
    assert _reset(client, task_id=tid, episode_id="worker-1") == "worker-1"
    clash = client.post("/reset", json={"task_id": tid, "episode_id": "worker-1"})
    assert clash.status_code == 409
    assert "worker-1" in clash.json()["detail"]
    assert "live" in clash.json()["detail"]
    assert _state(client, "worker-1").json()["turn"] == 0  # the first episode is untouched
    _step(client, "worker-1")
    assert _reset(client, task_id=tid, episode_id="worker-1") == "worker-1"  # finished: reusable
    assert _state(client, "worker-1").json()["turn"] == 0


def test_a_client_id_never_collides_with_a_server_made_one(make, tasks, monkeypatch):
    client = make(8)
    tid = tasks[0].task_id
    taken = f"{tid}-guess"
    assert _reset(client, task_id=tid, episode_id=taken) == taken
    draws = iter(["guess", "fresh"])
    monkeypatch.setattr(server_module.secrets, "token_urlsafe", lambda n: next(draws))
    assert _reset(client, task_id=tid) == f"{tid}-fresh"


def test_finished_sessions_are_evicted_before_live_ones_then_the_least_recently_used(make, tasks):
    client = make(3)
    tid = tasks[0].task_id
    a, b, c = (_reset(client, task_id=tid, episode_id=x) for x in "abc")
    _step(client, b)  # b finishes; a is the oldest live session
    d = _reset(client, task_id=tid, episode_id="d")
    gone = _state(client, b)
    assert gone.status_code == 404
    assert "evicted" in gone.json()["detail"]
    assert [_state(client, x).status_code for x in (a, c, d)] == [200, 200, 200]
    _state(client, a)  # a used most recently: c is now the least recently used
    _reset(client, task_id=tid, episode_id="e")
    assert _state(client, c).status_code == 404
    assert [_state(client, x).status_code for x in (a, d, "e")] == [200, 200, 200]
    health = client.get("/health").json()
    assert (health["sessions"], health["live"], health["evicted"]) == (3, 3, 2)


def test_close_releases_a_session(make, tasks):
    client = make(2)
    tid = tasks[0].task_id
    a = _reset(client, task_id=tid)
    closed = client.post("/close", json={"episode_id": a})
    assert closed.status_code == 200
    assert closed.json() == {"episode_id": a, "closed": True}
    gone = _state(client, a)
    assert gone.status_code == 404
    assert "closed" in gone.json()["detail"]
    assert client.post("/close", json={"episode_id": a}).status_code == 404
    b, c = _reset(client, task_id=tid), _reset(client, task_id=tid)  # the cap has room again
    assert client.get("/health").json()["evicted"] == 0
    assert {b, c} == set(client.app.state.sessions.ids())


def test_a_lone_surrogate_is_refused_before_the_episode_moves(make, tasks):
    """It decoded, ran, and then failed to encode: the turn moved on and the client got 500."""
    client = make(4)
    episode = _reset(client, task_id=tasks[0].task_id, seed=3)
    message = '{"role": "assistant", "content": "Bye \\ud800"}'  # JSON's escape, as sent
    body = f'{{"episode_id": "{episode}", "action": {{"message": {message}}}}}'
    bad = client.post("/step", content=body.encode(), headers={"content-type": "application/json"})
    assert bad.status_code == 400
    assert "lone surrogate" in bad.json()["detail"]
    assert _state(client, episode).json()["turn"] == 0
    reset = b'{"task_id": "%s", "episode_id": "\\ud800"}' % tasks[0].task_id.encode()
    refused = client.post("/reset", content=reset, headers={"content-type": "application/json"})
    assert refused.status_code == 400


def test_internal_faults_are_json_and_never_read_as_a_missing_session(
    indexed_catalog_dir, tasks, monkeypatch
):
    """A tool raising KeyError inside the episode was served as 404 "eps_rank" (a task row
    missing that θ axis did so; such a row is now refused at reset, with 400)."""
    client = TestClient(create_app(indexed_catalog_dir, tasks=tasks), raise_server_exceptions=False)
    task = next(t for t in tasks if "catalog_search" in t.tools)
    row = task.model_dump()
    theta = json.loads(row["theta"]) if isinstance(row["theta"], str) else dict(row["theta"])
    theta.pop("eps_rank")
    row["theta"] = json.dumps(theta) if isinstance(row["theta"], str) else theta
    refused = client.post("/reset", json={"task": row})
    assert refused.status_code == 400, refused.text
    assert "theta.eps_rank" in refused.json()["detail"]

    def broken(*args, **kwargs):
        raise KeyError("eps_rank")

    spec = REGISTRY["catalog_search"]
    monkeypatch.setitem(REGISTRY, "catalog_search", dataclasses.replace(spec, fn=broken))
    episode = _reset(client, task_id=task.task_id)
    call = {"name": "catalog_search", "arguments": '{"query": "lamp"}'}
    search = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "type": "function", "function": call}],
    }
    response = _step(client, episode, search)
    assert response.status_code == 500, response.text
    assert response.json()["detail"].startswith("internal error: KeyError")
    nan = client.post(
        "/step", content=b'{"episode_id": NaN}', headers={"content-type": "application/json"}
    )
    assert nan.status_code == 422
