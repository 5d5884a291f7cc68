"""The runtime: episode state, tools, the simulated user, tool-call parsing, the HTTP server."""


def __getattr__(name: str):  # lazy: `import shopgen.env.search` must not load the runtime
    if name in ("ShopEnv", "EpisodeError", "TaskError"):
        from shopgen.env import episode

        return getattr(episode, name)
    raise AttributeError(f"module 'shopgen.env' has no attribute {name!r}")
