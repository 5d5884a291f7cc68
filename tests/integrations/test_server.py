"""The HTTP server over loopback: concurrent sessions replay their oracles, seeds are honoured."""

from __future__ import annotations

import json
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")

from shopgen.client import ServerError, ShopgenClient  # noqa: E402
from shopgen.server import create_app  # noqa: E402


@pytest.fixture(scope="module")
def server(indexed_catalog_dir, tasks):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(indexed_catalog_dir, tasks=tasks)
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):  # bounded wait for startup
        if srv.started:
            break
        thread.join(timeout=0.05)  # poll the server thread while it starts
    assert srv.started
    yield url
    srv.should_exit = True
    thread.join(timeout=10)


def _replay(url, task):
    client = ShopgenClient(url)
    obs = client.reset(task_id=task.task_id)
    assert obs["messages"] == [m.model_dump() for m in task.messages]
    info, done = {}, False
    for message in task.decoded("oracle")[: task.axis("T_max")]:  # bounded by the task
        _, done, _, info = client.step(message)
        if done:
            break
    assert client.state()["done"] is True
    return info


def test_fifty_concurrent_sessions_replay_their_oracles_to_correct(server, tasks):
    jobs = [tasks[i % len(tasks)] for i in range(50)]
    with ThreadPoolExecutor(max_workers=10) as pool:
        infos = list(pool.map(lambda t: _replay(server, t), jobs))
    assert all(i["is_correct"] for i in infos), [i.get("score") for i in infos]
    assert ShopgenClient(server).health()["status"] == "healthy"


def test_same_seed_same_episode(server, tasks):
    a, b, c = ShopgenClient(server), ShopgenClient(server), ShopgenClient(server)
    env = tasks[0].env
    assert a.reset(env=env, d=0, seed=3) == b.reset(env=env, d=0, seed=3)
    assert a.reset(env=env, d=0, seed=3) != c.reset(env=env, d=0, seed=4)
    assert a.reset(seed=11) == b.reset(seed=11)  # from the loaded task set
    assert a.episode_id != b.episode_id or a.episode_id is not None


def test_client_step_returns_shop_env_step_order(server, tasks, shop):
    """It returned (observation, reward, done, info): read in ShopEnv.step's (and the
    README's) order, every finished episode's reward was True (1.0) and done was the reward."""
    task = tasks[0]
    call = {"name": json.loads(task.tools)[0]["function"]["name"], "arguments": "{}"}
    tool_turn = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "type": "function", "function": call}],
    }
    bye = {"role": "assistant", "content": "I do not know, sorry."}
    local = shop.spawn()
    local.reset(task)
    client = ShopgenClient(server)
    client.reset(task_id=task.task_id)
    for message in (tool_turn, bye):
        _, want_done, want_reward, want_info = local.step(message)
        _, done, reward, info = client.step(message)
        assert isinstance(done, bool)
        assert (done, reward) == (want_done, want_reward)
        assert info["turn"] == want_info["turn"]
    assert done is True
    assert reward == info["reward"] == want_info["reward"] < 0.5  # a wrong answer
    assert info["is_correct"] is False


def test_sessions_are_isolated(server, tasks):
    a, b = ShopgenClient(server), ShopgenClient(server)
    a.reset(task_id=tasks[0].task_id, episode_id="iso-a")
    b.reset(task_id=tasks[0].task_id, episode_id="iso-b")
    a.step({"role": "assistant", "content": "bye"})
    assert a.state()["done"]
    assert not b.state()["done"]


def test_state_never_shows_the_hidden_goal(server, tasks):
    c = ShopgenClient(server)
    c.reset(task_id=tasks[0].task_id)
    text = str(c.state())
    assert tasks[0].goal not in text
    assert tasks[0].user_script not in text


def test_bad_requests_get_clear_errors(server):
    c = ShopgenClient(server)
    with pytest.raises(ServerError, match="no loaded task"):
        c.reset(task_id="nope")
    c.episode_id = "missing"
    with pytest.raises(ServerError, match="no session"):
        c.step("hi")


def test_client_close_releases_its_session(server, tasks):
    c = ShopgenClient(server)
    c.reset(task_id=tasks[0].task_id)
    episode_id = c.episode_id
    assert c.close() == {"episode_id": episode_id, "closed": True}
    c.episode_id = episode_id
    with pytest.raises(ServerError, match="closed"):
        c.state()
    with pytest.raises(ServerError, match="reset"):
        ShopgenClient(server).close()


def test_schema_lists_tools(server):
    schema = ShopgenClient(server).schema()
    assert "catalog_search" in schema["tools"]
    assert "message" in str(schema["action"])
