"""What the test modules share: servers, fixture agents, streams, attack candidates."""
