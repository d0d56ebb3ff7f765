"""The load suite: an asyncio client that sweeps concurrency levels or request rates against
an OpenAI-compatible server and records latency percentiles, throughput and goodput.

    wire      one streamed chat completion over a raw asyncio connection, every chunk timed
    measure   one request's figures (TTFT, ITL with multi-token chunks spread, E2E, tokens)
    stats     percentiles, histograms, SLOs and bootstrap intervals (pure; the report uses it)
    engine    one level: closed-loop concurrency or open-loop constant/Poisson arrivals
"""
