"""The committed tool JSON Schemas are exactly what the registry produces (``make schemas``)."""

import json

from shopgen.env.tools import ENV_TOOLS, REGISTRY
from shopgen.env.tools.export import default_dir, export, schema_texts


def test_committed_schema_files_match_the_registry():
    out = default_dir()
    committed = {p.name: p.read_text(encoding="utf-8") for p in out.glob("*.json")}
    expected = schema_texts()
    assert sorted(committed) == sorted(expected), "run `make schemas` and commit the files"
    for name, text in expected.items():
        assert committed[name] == text, f"{name} is stale: run `make schemas`"


def test_export_writes_one_file_per_tool_and_removes_stale_ones(tmp_path):
    (tmp_path / "gone_tool.json").write_text("{}")
    paths = export(tmp_path)
    assert sorted(p.stem for p in paths) == sorted(REGISTRY)
    assert not (tmp_path / "gone_tool.json").exists()
    schema = json.loads((tmp_path / "ask_user.json").read_text())
    assert schema["function"]["parameters"]["required"] == ["question"]


def test_every_env_offers_ask_user_and_only_registered_tools():
    for env, names in ENV_TOOLS.items():
        assert "ask_user" in names, env
        assert set(names) <= set(REGISTRY), env
    assert {"orders_list", "order_get_details"} <= set(ENV_TOOLS["status"])
    assert {"return_start", "exchange_start", "policy_search"} <= set(ENV_TOOLS["returns"])
    assert "policy_search" in ENV_TOOLS["policy"]
    assert {"return_start", "cart_add", "orders_list"} <= set(ENV_TOOLS["journey"])
