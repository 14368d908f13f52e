"""Loopback servers the benchmarks and the tests drive: an OpenAI-compatible stand-in, a hostile
endpoint, a forward proxy, and the background-thread HTTP server they are built on."""
