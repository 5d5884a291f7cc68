"""verifiers ≥ 0.4: the library loads the shopgen plugin and a scripted model plays a rollout.

The "model" is a local OpenAI-compatible HTTP server replaying a scripted list of assistant
messages; the rollout goes through the library's own path (``vf.load_environment``,
``Env.serving``, ``Env.run_episode``: interception server, client, harness, task scoring), so
the reward on the trace is what ``vf-eval`` would record. No network beyond 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json

import pytest

vf = pytest.importorskip("verifiers.v1", reason="verifiers>=0.4 is not installed (shopgen[vf])")
web = pytest.importorskip("aiohttp.web", reason="aiohttp (a verifiers dependency) is missing")

from shopgen.exports import export_tasks  # noqa: E402
from shopgen.integrations.verifiers_env import load_environment  # noqa: E402
from shopgen.integrations.vf_taskset import ShopgenHarness, ShopgenTask  # noqa: E402
from shopgen.verifiers.reward import MAX_REWARD  # noqa: E402


@pytest.fixture(scope="module")
def export_dir(task_dir, indexed_catalog_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("vf") / "export"
    export_tasks(task_dir, out, fmt="verifiers", catalog=indexed_catalog_dir)
    return out


@pytest.fixture(scope="module")
def env(export_dir, indexed_catalog_dir):
    return load_environment(dataset_dir=export_dir, catalog=indexed_catalog_dir)


def _completion(message: dict, model: str) -> dict:
    calls = message.get("tool_calls") or []
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": message.get("content") or "",
                    **({"tool_calls": calls} if calls else {}),
                },
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


async def _rollout(env, task, script: list[dict]) -> tuple[object, list[dict]]:
    """One episode of ``task`` with a scripted model; the trace and the requests it saw."""
    seen: list[dict] = []

    async def chat(request):
        body = await request.json()
        seen.append(body)
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        reply = script[min(turn, len(script) - 1)]
        return web.json_response(_completion(reply, body["model"]))

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        ctx = vf.ModelContext(
            model="scripted",
            client=vf.EvalClientConfig(base_url=f"http://127.0.0.1:{port}/v1"),
        )
        async with env.serving():
            episode = await env.run_episode(task, ctx)
    finally:
        await runner.cleanup()
    assert not episode.errors, episode.errors
    assert episode.traces[0].ok, episode.traces[0].errors
    return episode.traces[0], seen


def test_library_loads_the_plugin_with_the_export_rows(env, export_dir, tasks):
    assert isinstance(env, vf.SingleAgentEnv)
    assert isinstance(env._harnesses["agent"], ShopgenHarness)
    loaded = list(env.taskset)
    assert all(isinstance(t, ShopgenTask) for t in loaded)
    assert [t.data.answer for t in loaded] == [t.task_id for t in tasks]
    first = loaded[0].data
    assert [m.model_dump(exclude_none=True) for m in first.prompt] == [
        m.model_dump() for m in tasks[0].messages
    ]
    assert first.task == tasks[0].env
    assert json.loads(first.info["task_row"])["task_id"] == tasks[0].task_id


def test_scripted_oracle_rollout_scores_the_shopgen_reward(env, tasks):
    task = next(iter(env.taskset))
    oracle = tasks[0].decoded("oracle")
    trace, seen = asyncio.run(_rollout(env, task, oracle))
    assert trace.rewards["shopgen_reward"].score == pytest.approx(MAX_REWARD)
    assert trace.rewards["shopgen_correct"].score == 1.0
    # the model was offered the row's tools and saw the tool results of its calls
    offered = {t["function"]["name"] for t in seen[0]["tools"]}
    assert offered == {s["function"]["name"] for s in json.loads(tasks[0].tools)}
    assert any(m["role"] == "tool" for m in seen[-1]["messages"])
    assert [m.role for m in trace.messages].count("assistant") == len(oracle)


def test_a_wrong_answer_scores_lower(env, tasks):
    task = next(iter(env.taskset))
    trace, _ = asyncio.run(
        _rollout(env, task, [{"role": "assistant", "content": "Sorry, I cannot help with that."}])
    )
    assert trace.rewards["shopgen_correct"].score == 0.0
    assert trace.rewards["shopgen_reward"].score < MAX_REWARD


def test_load_environment_needs_both_paths(export_dir):
    with pytest.raises(ValueError, match="dataset_dir= and catalog="):
        load_environment(dataset_dir=export_dir)
