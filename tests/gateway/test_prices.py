"""The price table: bundled prices, a user's file on top, an unknown price None (never 0)."""

from __future__ import annotations

from pathlib import Path

from benchrig.gateway.prices import BUNDLED, PriceTable, user_file


def test_the_embedded_model_is_free_and_an_unknown_model_has_no_price() -> None:
    table = PriceTable([BUNDLED])
    free = table.find("embedded", "smollm2")
    assert free is not None and free.cost(1000, 100) == 0.0
    assert table.find("upstream", "gpt-x") is None


def test_a_users_entry_wins_and_a_bad_one_is_reported_not_used(tmp_path: Path) -> None:
    mine = tmp_path / "prices.toml"
    mine.write_text('[embedded."*"]\ninput = 1.0\noutput = 2.0\n'
                    '[upstream."m"]\ninput = -1\noutput = 2\n')
    table = PriceTable([BUNDLED, mine])
    price = table.find("embedded", "smollm2")
    assert price is not None and price.cost(1_000_000, 1_000_000) == 3.0
    assert table.find("upstream", "m") is None
    assert any("upstream" in problem for problem in table.problems)


def test_unknown_token_counts_give_no_cost() -> None:
    price = PriceTable([BUNDLED]).find("scripted", "x")
    assert price is not None and price.cost(None, 5) is None


def test_the_users_file_comes_from_benchrig_prices_or_the_config_folder() -> None:
    assert user_file({"BENCHRIG_PRICES": "/x/p.toml"}) == Path("/x/p.toml")
    assert user_file({"XDG_CONFIG_HOME": "/c"}) == Path("/c/benchrig/prices.toml")
