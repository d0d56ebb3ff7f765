"""benchrig.toml and the effective settings it leads to (thinking budget, think per suite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchrig.config import Config, load_config
from benchrig.core.errors import UsageError
from benchrig.core.task import TaskSpec
from benchrig.orchestrate.runner import Overrides, settings_for
from benchrig.spec import load_task
from tests.conftest import TASKS, cli_call


def task(**changes: object) -> TaskSpec:
    from dataclasses import replace

    return replace(load_task(TASKS / "lru-cache.md"), **changes)  # type: ignore[arg-type]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "benchrig.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path)
    assert config.path is None
    assert config.thinking_models == ("deepseek-r1", "qwq", "magistral", "qwen3")
    assert config.thinking_token_multiplier == 12
    assert config.think_default("speed") is False and config.think_default("context") is False
    assert config.think_default("coding") is None  # the model's own default


@pytest.mark.parametrize(("model", "thinks"), [
    ("qwen3:8b", True), ("deepseek-r1:7b", True), ("QwQ:32b", True),
    ("hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M", True), ("magistral-small", True),
    ("qwen2.5-coder:7b", False), ("smollm2", False), ("llama3.1:8b-qwen3", False),
])
def test_thinking_models_match_on_the_base_name(model: str, thinks: bool) -> None:
    assert Config().is_thinking_model(model) is thinks


def test_thinking_model_gets_the_multiplied_budget_in_coding() -> None:
    coding = task()  # lru-cache: max_tokens 1024
    s = settings_for(coding, Overrides(), model="qwen3:8b")
    assert (s.max_tokens, s.max_tokens_multiplier, s.thinking_model) == (1024 * 12, 12, True)
    plain = settings_for(coding, Overrides(), model="qwen2.5-coder:7b")
    assert (plain.max_tokens, plain.max_tokens_multiplier, plain.thinking_model) == (1024, 1,
                                                                                     False)
    # speed is not a multiplied suite; an explicit --max-tokens is taken as given
    assert settings_for(task(suite="speed"), Overrides(), model="qwen3").max_tokens == 1024
    forced = settings_for(coding, Overrides(max_tokens=50), model="qwen3")
    assert (forced.max_tokens, forced.max_tokens_multiplier) == (50, 1)


def test_the_context_grows_to_hold_the_budget_unless_it_is_given() -> None:
    coding = task()
    thinking = settings_for(coding, Overrides(), model="qwen3:8b")
    assert (thinking.context_size, thinking.context_size_source) == (12288 + 2048,
                                                                     "max_tokens + 2048")
    plain = settings_for(coding, Overrides(), model="qwen2.5-coder:7b")
    assert (plain.context_size, plain.context_size_source) == (4096, "default")
    given = settings_for(coding, Overrides(context_size=2048), model="qwen3")
    assert (given.context_size, given.context_size_source) == (2048, "command line")
    assert settings_for(coding, Overrides(max_tokens=3000), model="m").context_size == 5048


def test_think_precedence_command_line_task_suite_model() -> None:
    speed = task(suite="speed")
    assert (settings_for(speed, Overrides()).think,
            settings_for(speed, Overrides()).think_source) == (False, "suite default")
    assert settings_for(task(), Overrides()).think_source == "model default"
    assert settings_for(task(), Overrides()).think is None
    on = settings_for(speed, Overrides(), model="qwen3")
    assert on.think is False
    from_task = settings_for(task(suite="speed", think=True), Overrides())
    assert (from_task.think, from_task.think_source) == (True, "task")
    cli = settings_for(task(think=True), Overrides(think=False))
    assert (cli.think, cli.think_source) == (False, "command line")


def test_file_overrides_and_is_recorded(tmp_path: Path) -> None:
    path = write(tmp_path, 'thinking_models = ["granite"]\nthinking_token_multiplier = 3\n'
                           '[think]\nspeed = true\ncoding = false\ncontext = "default"\n')
    config = load_config(cwd=tmp_path)
    assert config.path == path
    s = settings_for(task(), Overrides(), model="granite3.3:8b", config=config)
    assert (s.max_tokens, s.think, s.config_file) == (3072, False, str(path))
    assert settings_for(task(), Overrides(), model="qwen3", config=config).max_tokens == 1024
    assert config.think_default("speed") is True and config.think_default("context") is None
    assert load_config(path, cwd=Path("/")).path == path


@pytest.mark.parametrize(("text", "message"), [
    ("thinking_model = []\n", "thinking_model: unknown key"),
    ("thinking_token_multiplier = 0\n", "thinking_token_multiplier: must be an integer"),
    ("thinking_models = \"qwen3\"\n", "thinking_models: must be a list"),
    ("[think]\nsped = false\n", "think.sped: unknown suite"),
    ("[think]\nspeed = \"off\"\n", 'think.speed: must be true, false or "default"'),
    ("thinking_models = [\n", "invalid TOML"),
])
def test_bad_files_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as caught:
        load_config(cwd=tmp_path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_a_named_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="config file not found"):
        load_config(tmp_path / "nope.toml")


@pytest.mark.slow
def test_cli_records_the_effective_settings(tmp_path: Path) -> None:
    import json

    from tests.conftest import SOLUTIONS, answer_file, fenced

    results = tmp_path / "results"
    config = write(tmp_path, "thinking_token_multiplier = 4\n")
    answer = answer_file(tmp_path, fenced((SOLUTIONS / "lru-cache.py").read_text()))
    ran = cli_call("run", "lru-cache", "-m", "qwen3:8b", "-d", "replay", "-p", str(answer),
                   "--no-think", "--config", str(config), results_dir=results)
    assert ran.code == 0, ran.stderr
    (path,) = results.glob("*.json")
    settings = json.loads(path.read_text())["settings"]
    # replay sends nothing: what was asked is recorded as `<name>_requested`
    assert (settings["max_tokens_requested"], settings["max_tokens_multiplier"]) == (4096, 4)
    assert (settings["think_requested"], settings["think_source"]) == (False, "command line")
    assert (settings["thinking_model"], settings["config_file"]) == (True, str(config))
    assert (settings["context_size_requested"], settings["context_size_source"]) == (
        4096 + 2048, "max_tokens + 2048")
