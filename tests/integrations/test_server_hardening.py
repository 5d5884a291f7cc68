"""What the server serves a client: the verifier's contract but not the hidden goal, and no
request beyond its size limits (red-team findings: answer oracle, unbounded requests).

Driven in-process through FastAPI's TestClient, as test_server_sessions.py is.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from click.testing import CliRunner
from fastapi.testclient import TestClient

from shopgen.schemas.envs import env_spec
from shopgen.server import create_app

BYE = {"role": "assistant", "content": "Sorry, I cannot help with that."}
SCORE_FIELDS = {"reward", "r_task", "r_eff", "r_hall", "is_correct"}


def _call(name: str, **arguments) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _turn(*calls: dict) -> dict:
    numbered = [{"id": f"c{i}", **c} for i, c in enumerate(calls)]
    return {"role": "assistant", "content": "", "tool_calls": numbered}


def _task(tasks, env: str | None = None, tool: str | None = None):
    for task in tasks:
        if (env is None or task.env == env) and (tool is None or f'"{tool}"' in task.tools):
            return task
    pytest.skip(f"no {env or 'any'} task offering {tool or 'any tool'} in the fixture set")


@pytest.fixture(scope="module")
def app(indexed_catalog_dir, tasks):
    return create_app(indexed_catalog_dir, tasks=tasks)


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app)


@pytest.fixture(scope="module")
def debug_client(indexed_catalog_dir, tasks):
    return TestClient(create_app(indexed_catalog_dir, tasks=tasks, details=True))


def _reset(client: TestClient, task) -> str:
    response = client.post("/reset", json={"task_id": task.task_id})
    assert response.status_code == 200, response.text
    return response.json()["episode_id"]


def _step(client: TestClient, episode_id: str, message) -> tuple[int, dict, str]:
    response = client.post("/step", json={"episode_id": episode_id, "action": {"message": message}})
    return response.status_code, response.json(), response.text


def _turn_of(client: TestClient, episode_id: str) -> int:
    return client.get("/state", params={"episode_id": episode_id}).json()["turn"]


def _local(shop, task, *messages):
    """``ShopEnv.step``'s last return for ``messages`` played in process."""
    env = shop.spawn()
    env.reset(task)
    for message in messages:
        out = env.step(message)
    return out


# -- the final info: the verifier's contract, its details only on request -------------------


def test_the_final_info_holds_the_contract_and_no_goal(client, tasks, shop):
    """A probe episode ended at once read a cart's goal lines in info.score.details.missing."""
    task = _task(tasks, "cart")
    goal_ids = {line["product_id"] for line in json.loads(task.goal)["cart"]}
    _, want_done, want_reward, want_info = _local(shop, task, BYE)
    assert goal_ids & set(map(str, want_info["score"]["details"]["missing"][0]))  # in process
    status, body, text = _step(client, _reset(client, task), BYE)
    assert status == 200
    info = body["info"]
    assert (body["done"], body["reward"]) == (want_done, want_reward)
    assert set(info["score"]) == SCORE_FIELDS
    assert {k: info[k] for k in SCORE_FIELDS} == {k: want_info[k] for k in SCORE_FIELDS}
    assert (info["task_id"], info["env"], info["d"]) == (task.task_id, task.env, task.d)
    assert info["verifier_version"] == env_spec(task.env).version
    assert "details" not in text
    assert not any(pid in text for pid in goal_ids)


def test_state_never_names_the_user_scripts_slots(client, tasks):
    """/state showed revealed_slots and each question's answered slot names (hidden script)."""
    task = _task(tasks, tool="ask_user")
    episode = _reset(client, task)
    question = _call("ask_user", question="What size, colour and budget do you have in mind?")
    assert _step(client, episode, _turn(question))[0] == 200
    state = client.get("/state", params={"episode_id": episode})
    assert state.status_code == 200
    assert "extra" not in state.json()["state"]
    for word in ("revealed_slots", '"answered"', '"questions"'):
        assert word not in state.text
    _, body, text = _step(client, episode, BYE)
    assert body["done"] is True
    assert "extra" not in body["info"]["state"]
    assert "revealed_slots" not in text


def test_details_are_served_when_the_server_is_asked_to(debug_client, tasks, shop):
    task = _task(tasks, tool="ask_user")
    question = _turn(_call("ask_user", question="What size, colour and budget do you want?"))
    episode = _reset(debug_client, task)
    assert _step(debug_client, episode, question)[0] == 200
    extra = debug_client.get("/state", params={"episode_id": episode}).json()["state"]["extra"]
    assert "questions" in extra
    _, _, _, want = _local(shop, task, question, BYE)
    _, body, _ = _step(debug_client, episode, BYE)
    assert body["info"]["score"] == json.loads(json.dumps(want["score"]))
    assert body["info"]["state"]["extra"] == json.loads(json.dumps(want["state"]["extra"]))
    assert debug_client.get("/health").json()["details"] is True


def test_the_in_process_info_is_unchanged(tasks, shop):
    _, _, _, info = _local(shop, _task(tasks, "cart"), BYE)
    assert "details" in info["score"]
    assert "state" in info
    assert "env" not in info  # the served extras are the server's, not ShopEnv's


# -- size limits ------------------------------------------------------------------------------


def _is_json_error(response, status: int) -> None:
    assert response.status_code == status, response.text[:300]
    assert set(response.json()) == {"detail"}
    assert "Traceback" not in response.text


def test_a_body_over_the_limit_is_refused_with_413_and_the_turn_is_not_played(client, tasks):
    """A 20 MB message was played and kept in the stored transcript."""
    task = tasks[0]
    episode = _reset(client, task)
    big = {"role": "assistant", "content": "x" * (3 * 1024 * 1024)}
    body = json.dumps({"episode_id": episode, "action": {"message": big}}).encode()
    response = client.post("/step", content=body, headers={"content-type": "application/json"})
    _is_json_error(response, 413)
    assert "bytes" in response.json()["detail"]

    def chunks():  # no Content-Length: counted as it arrives
        for start in range(0, len(body), 65536):
            yield body[start : start + 65536]

    chunked = client.post("/step", content=chunks(), headers={"content-type": "application/json"})
    _is_json_error(chunked, 413)
    assert _turn_of(client, episode) == 0
    assert _step(client, episode, BYE)[1]["done"] is True  # the session still plays


def test_a_body_under_the_limit_is_served(client, tasks):
    episode = _reset(client, tasks[0])
    status, body, _ = _step(client, episode, {"role": "assistant", "content": "y" * 500_000})
    assert (status, body["done"]) == (200, True)


def test_a_turn_far_over_the_call_budget_is_refused_before_it_is_parsed(client, tasks):
    """100,000 tool calls in one message held the server's lock for about two seconds."""
    task = tasks[0]
    episode = _reset(client, task)
    name = json.loads(task.tools)[0]["function"]["name"]
    many = _turn(*[_call(name) for _ in range(2000)])
    refused = client.post("/step", json={"episode_id": episode, "action": {"message": many}})
    _is_json_error(refused, 413)
    assert "2,000 tool calls" in refused.json()["detail"]
    block = "<tool_call>" + json.dumps({"name": name, "arguments": {}}) + "</tool_call>"
    text = client.post("/step", json={"episode_id": episode, "action": {"message": block * 2000}})
    _is_json_error(text, 413)
    assert _turn_of(client, episode) == 0


def test_calls_a_little_over_the_budget_still_get_the_runtimes_over_budget_results(
    client, tasks, shop
):
    task = tasks[0]
    budget = task.axis("B_tool")
    name = json.loads(task.tools)[0]["function"]["name"]
    message = _turn(*[_call(name) for _ in range(budget + 3)])
    status, body, _ = _step(client, _reset(client, task), message)
    assert status == 200
    kinds = [e["kind"] for e in body["info"]["errors"]]
    assert kinds.count("over_budget") == 3
    local_obs, _, _, _ = _local(shop, task, message)
    assert body["observation"] == json.loads(json.dumps(local_obs))


def test_a_client_episode_id_is_bounded(client, tasks):
    """A 10,000-character id was accepted and kept."""
    long = client.post("/reset", json={"task_id": tasks[0].task_id, "episode_id": "e" * 10_000})
    _is_json_error(long, 400)
    assert "at most 256" in long.json()["detail"]
    ok = client.post("/reset", json={"task_id": tasks[0].task_id, "episode_id": "e" * 256})
    assert ok.status_code == 200


# -- shopgen serve's options -------------------------------------------------------------------


def test_serve_passes_details_and_the_body_limit_to_the_app(
    indexed_catalog_dir, task_dir, monkeypatch
):
    uvicorn = pytest.importorskip("uvicorn")
    from shopgen.commands.serve import serve

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    args = ["--catalog", str(indexed_catalog_dir), "--tasks", str(task_dir), "--port", "0"]
    result = CliRunner().invoke(serve, [*args, "--details", "--max-request-bytes", "4096"])
    assert result.exit_code == 0, result.output
    assert "score details" in result.output
    app = served["app"]
    assert app.state.sessions.details is True
    big = TestClient(app).post(
        "/reset", json={"seed": 1, "episode_id": "x" * 200, "pad": "y" * 5000}
    )
    _is_json_error(big, 413)
    result = CliRunner().invoke(serve, args)
    assert result.exit_code == 0, result.output
    assert served["app"].state.sessions.details is False
