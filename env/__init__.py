"""The runtime: episode state, tools, the simulated user, tool-call parsing, the HTTP server."""
