"""The price table: the bundled prices.toml, then the user's (BENCHRIG_PRICES or
~/.config/benchrig/prices.toml); an unknown price is None, never 0."""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUNDLED = Path(__file__).with_name("prices.toml")


@dataclass(frozen=True)
class Price:
    input_per_m: float
    output_per_m: float
    source: str

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        if input_tokens is None or output_tokens is None:
            return None
        return (input_tokens * self.input_per_m + output_tokens * self.output_per_m) / 1e6


def user_file(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get("BENCHRIG_PRICES"):
        return Path(env["BENCHRIG_PRICES"])
    base = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "benchrig" / "prices.toml"


def _rate(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    rate = float(value)
    return rate if math.isfinite(rate) and rate >= 0 else None


class PriceTable:
    """Prices by (back end, model); a user's entry overrides a bundled one."""

    def __init__(self, files: list[Path] | None = None) -> None:
        self.entries: dict[tuple[str, str], Price] = {}
        self.problems: list[str] = []
        for path in files if files is not None else [BUNDLED, user_file()]:
            self._read(path)

    def _read(self, path: Path) -> None:
        try:
            data = tomllib.loads(path.read_text())
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            self.problems.append(f"{path}: {exc}")
            return
        for backend, models in data.items():
            if not isinstance(models, dict):
                continue
            for model, entry in models.items():
                rates = (_rate(entry.get("input")), _rate(entry.get("output"))
                         ) if isinstance(entry, dict) else (None, None)
                if rates[0] is None or rates[1] is None:
                    self.problems.append(f"{path}: [{backend}.{model!r}] needs input and "
                                         "output, numbers of at least 0")
                    continue
                note = entry.get("note") if isinstance(entry.get("note"), str) else None
                self.entries[(backend, model)] = Price(
                    rates[0], rates[1], note or f"price table {path.name}: {backend}/{model}")

    def find(self, backend: str, model: str) -> Price | None:
        return self.entries.get((backend, model)) or self.entries.get((backend, "*"))
