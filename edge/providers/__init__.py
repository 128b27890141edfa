"""The LLM backends behind one contract: ``base`` (``Provider``, ``ProviderContext``, the message
and tool types) and ``errors``; ``factory.make_provider`` turns a SPEC string (``scripted``,
``ollama:MODEL``, ``openai:MODEL`` ...) into one, loading only that provider's client library;
``resilience`` wraps them in retries and fallback chains.
"""
